package platform_test

import (
	"context"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// TestWiring: platform.New is the one place the areas' hooks are
// registered, each once. A lead created through one platform gets one
// webhook delivery and one report count, although a second platform
// stands on the same database (as a server and a worker can in one
// process); a sequence paused through either holds its enrollments, and
// marking a lead do-not-contact through the lead view stops its
// enrollment, through the hooks platform.New set.
func TestWiring(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		cfg := platform.Config{DB: d, Clock: clock, SecretKey: secret.TestKey(),
			Webhooks: webhooks.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
		one, two := platform.New(cfg), platform.New(cfg)
		_, err := one.Workspaces.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "acme", Timezone: "UTC", Plan: "pro",
			Members: []workspace.MemberSpec{{Email: "owner@acme.test", Role: apikit.RoleOwner}}}}})
		is.NoErr(err)
		w, err := one.Workspaces.ByName(ctx, "acme")
		is.NoErr(err)
		p := apikit.Principal{WorkspaceID: w.ID, Plan: w.Plan, Role: apikit.RoleOwner}
		_, err = one.Webhooks.Create(ctx, p, webhooks.CreateInput{URL: "https://127.0.0.1:9/hooks", Events: []string{"*"}})
		is.NoErr(err)

		name := "Ann Lee"
		ann, err := one.Leads.Upsert(ctx, p, leads.LeadInput{Name: &name, PublicIdentifier: ptr("ann-lee")})
		is.NoErr(err)
		deliveries, err := d.NewSelect().Table("deliveries").Count(ctx)
		is.NoErr(err)
		is.Equal(deliveries, int64(1))
		var created int64
		is.NoErr(d.NewSelect().Table("report_daily").ColumnExpr("coalesce(sum(value), 0)").
			Where("workspace_id = ? AND metric = ? AND grain = ?", w.ID, "leads.created", "client").Scan(ctx, &created))
		is.Equal(created, int64(1))

		// The enrollments' hooks, set once by each platform on its own
		// services, act whichever platform changes the sequence or lead.
		_, err = one.Senders.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: "UTC"}, []senders.Spec{{Name: "li", Channel: senders.LinkedIn}})
		is.NoErr(err)
		_, err = one.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: w.ID}, []sequences.Spec{{Name: "Run", Senders: []string{"li"},
			Steps: []sequences.Step{{ID: "view", Type: "profile_view"}}}})
		is.NoErr(err)
		q, err := one.Sequences.ByName(ctx, w.ID, "Run")
		is.NoErr(err)
		is.NoErr(two.Sequences.ActivateByName(ctx, w.ID, "Run"))
		_, err = one.Enrollments.Commit(ctx, p, enrollments.EnrollInput{SequenceID: q.ID, LeadIDs: []string{ann.Lead.ID}, Confirm: true})
		is.NoErr(err)
		_, err = two.Leads.Suppress(ctx, p, ann.Lead.ID)
		is.NoErr(err)
		en, err := one.Enrollments.List(ctx, p, enrollments.Filter{LeadID: ann.Lead.ID, Limit: 10})
		is.NoErr(err)
		is.Equal(len(en.Data), 1)
		is.Equal(en.Data[0].Status, enrollments.Stopped)
	})
}

func ptr[T any](v T) *T { return &v }

// TestPlugins: every transport the platform is built with is a plug-in
// the registry names, built by the platform, and a console form of its
// settings read back gives settings its kind accepts.
func TestPlugins(t *testing.T) {
	is := is.New(t)
	d := dbtest.Open(t, db.SQLite)
	pl := platform.New(platform.Config{DB: d, Clock: apikit.NewFakeClock(time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))})
	ts := pl.Transports(platform.Outside{Seed: 1})
	is.Equal(senders.KindNames(), []string{senders.TransportSandbox, "smtp", "unipile"})
	for _, p := range senders.Plugins() {
		is.True(ts[p.Name] != nil) // built
		if p.Form == nil {
			continue
		}
		// The empty form, filled in as a member would, reads back into
		// settings that hold every section the kind takes.
		v := url.Values{}
		for _, fs := range p.Form.Fieldsets(senders.Settings{}) {
			for _, f := range fs.Fields {
				switch {
				case f.Type == "select":
					v.Set(f.Name, f.Options[0])
				case f.Type == "number":
					v.Set(f.Name, "993")
				case f.Type == "password", strings.HasSuffix(f.Name, "_env"), strings.HasSuffix(f.Name, ".ca_file"):
				case f.Type == "url":
					v.Set(f.Name, "https://api.example.test")
				default:
					v.Set(f.Name, "x")
				}
			}
		}
		v.Set(p.Sections[0]+".secret", "s3cret")
		v.Set(p.Name+".api_key", "s3cret")
		set, typed, err := p.Form.Read(v, func(what string) string { return "LEADLINE_SENDER_X_" + what })
		is.NoErr(err)
		is.NoErr(p.CheckSections(set))
		is.True(len(typed) > 0) // the typed secret, under the name made for it
		for name := range typed {
			is.True(slices.Contains(set.SecretNames(p.Name), name))
		}
	}
}
