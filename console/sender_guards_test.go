package console

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
)

// TestSenderFormEditsGuards: a sender's guards set in a setup file show in
// its form, saving the form as shown keeps them, a manager changes them
// there, an empty field takes the default, and a value that is not a
// number, or that the setup file would refuse, changes nothing.
func TestSenderFormEditsGuards(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		p := e.owner()
		ctx := context.Background()
		rate, days := 0.2, 14
		_, err := e.pl.Senders.Apply(ctx, senders.Owner{WorkspaceID: p.WorkspaceID, Timezone: p.Timezone}, []senders.Spec{{Name: "anna", Channel: senders.LinkedIn,
			GuardSettings: senders.GuardSettings{Spacing: &senders.Spacing{Min: "1m", Max: "4m"}, MinAcceptanceRate: &rate, WithdrawAfterDays: &days,
				Holidays: &senders.Holidays{Country: "DE", Dates: []string{"2026-12-24"}}}}})
		is.NoErr(err)
		s, err := e.pl.Senders.ByName(ctx, p.WorkspaceID, "anna")
		is.NoErr(err)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		path := "/app/senders/" + s.ID
		stored := func() senders.GuardSettings {
			s, err := e.pl.Senders.ByName(ctx, p.WorkspaceID, "anna")
			is.NoErr(err)
			return s.Guards
		}

		page := boss.get(path)
		is.True(strings.Contains(page.body, `id="s-guards"`))
		form := formValues(t, page.body, "sender-form")
		is.Equal(form.Get("guard.spacing_min"), "1m0s")
		is.Equal(form.Get("guard.min_acceptance_rate"), "0.2")
		is.Equal(form.Get("guard.holidays"), "2026-12-24")
		is.Equal(form.Get("guard.withdraw_per_day"), "50") // the default, filled in as the record shows it
		before := stored()
		is.Equal(boss.post(path, path, form).code, http.StatusSeeOther)
		is.Equal(stored(), before) // saved as shown: the same guards

		form.Set("guard.spacing_max", "5m")
		form.Set("guard.withdraw_after_days", "0") // off
		form.Set("guard.min_acceptance_rate", "")  // the default
		form.Set("guard.holidays", "2026-12-24, 2026-12-31")
		is.Equal(boss.post(path, path, form).code, http.StatusSeeOther)
		g := stored()
		is.Equal(*g.Spacing, senders.Spacing{Min: "1m0s", Max: "5m0s"})
		is.Equal(*g.WithdrawAfterDays, 0)
		is.Equal(*g.MinAcceptanceRate, senders.DefaultMinAcceptanceRate)
		is.Equal(g.Holidays.Dates, []string{"2026-12-24", "2026-12-31"})

		for field, bad := range map[string]string{"guard.withdraw_per_day": "many", "guard.min_acceptance_rate": "1.5", "guard.spacing_min": "soon",
			"guard.holidays": "Christmas"} {
			f := formValues(t, boss.get(path).body, "sender-form")
			f.Set(field, bad)
			r := boss.post(path, path, f)
			is.Equal(r.code, http.StatusUnprocessableEntity)
			is.True(strings.Contains(r.body, escaped(bad))) // shown as typed
			is.Equal(stored(), g)                           // nothing changed
		}
	})
}
