package setup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/setup"
)

// TestApplyGuards: a setup file sets a sender's guards by its own keys,
// and a workspace's holidays are every sender's days off; a bad value is
// refused with E_PAYLOAD_INVALID and nothing is applied.
func TestApplyGuards(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		apply := applier(ctx, d, clock)
		guarded := strings.Replace(file, "    senders:\n", "    holidays: {country: DE}\n    senders:\n", 1)
		guarded = strings.Replace(guarded, "{name: anna, channel: linkedin, client: Globex}",
			"{name: anna, channel: linkedin, client: Globex, spacing: {min: 1m, max: 2m}, min_acceptance_rate: 0.2, holidays: {dates: [2026-12-24]}}", 1)
		bad := strings.Replace(guarded, "min_acceptance_rate: 0.2", "min_acceptance_rate: 20", 1)
		err := apply(bad)
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		is.True(strings.Contains(err.Error(), "min_acceptance_rate"))
		n, err := d.NewSelect().Table("senders").Count(ctx)
		is.NoErr(err)
		is.Equal(n, int64(0))

		is.NoErr(apply(guarded))
		pl := platform.New(platform.Config{DB: d, Clock: clock})
		w, err := pl.Workspaces.ByName(ctx, "acme")
		is.NoErr(err)
		s, err := pl.Senders.ByName(ctx, w.ID, "anna")
		is.NoErr(err)
		is.Equal(s.Guards.Spacing.Min, "1m0s")
		is.Equal(*s.Guards.MinAcceptanceRate, 0.2)
		is.Equal(s.Guards.Holidays.Country, "DE") // the workspace's
		is.True(s.Holiday("2026-12-24"))          // its own
		is.True(s.Holiday("2026-12-25"))          // Germany's
	})
}

// applier returns a function that decodes a setup text and applies it on d.
func applier(ctx context.Context, d *db.DB, clock apikit.Clock) func(text string) error {
	return func(text string) error {
		f, err := setup.Decode(strings.NewReader(text))
		if err != nil {
			return err
		}
		_, err = setup.Apply(ctx, d, clock, secret.TestKey(), f)
		return err
	}
}
