package platform_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/oauth"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/workspace"
)

// TestRunnerSweepsOAuthStates: the runner's hourly checks delete the
// connects whose links expired and keep the ones still open.
func TestRunnerSweepsOAuthStates(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		pl := platform.New(platform.Config{DB: d, Clock: clock, SecretKey: secret.TestKey()})
		w, clients, _, err := pl.Workspaces.ApplyWorkspace(ctx, workspace.WorkspaceSpec{Name: "acme", Timezone: "UTC",
			Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}}})
		is.NoErr(err)
		m := &email.Server{Host: "127.0.0.1", Port: 1, Security: "none", Username: "box@acme.test", Auth: "oauth", OAuth: &email.OAuth{Provider: "google"}}
		_, err = pl.Senders.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: "UTC", Clients: clients}, []senders.Spec{{Name: "box",
			Channel: senders.Email, Address: "box@acme.test", Transport: "smtp", Sections: email.Sections(m, m)}})
		is.NoErr(err)
		s, err := pl.Senders.ByName(ctx, w.ID, "box")
		is.NoErr(err)
		_, err = pl.OAuth.SetApp(ctx, w.ID, oauth.AppInput{Provider: "google", ClientID: "id", Secret: "s"})
		is.NoErr(err)
		begin := func() string {
			_, state, err := pl.OAuth.Begin(ctx, s, "google", oauth.BoundCLI, "http://127.0.0.1/app/oauth/callback")
			is.NoErr(err)
			return state
		}
		states := func() int64 {
			n, err := d.NewSelect().Table("oauth_states").Count(ctx)
			is.NoErr(err)
			return n
		}

		old := begin()
		clock.Advance(time.Hour) // old's link expired; the checks are due
		begin()
		is.NoErr(pl.Runner().Checks(ctx))
		is.Equal(states(), int64(1)) // the open one is kept
		_, err = pl.OAuth.Status(ctx, old)
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
	})
}
