package reports_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// BenchmarkWritePath measures what the rollups add to the two hottest
// writes: a lead created through the leads service, and a runner's
// action.sent in a transaction of its own. Each runs with a log that has
// the webhook outbox alone ("outbox") and with the outbox and the rollups
// ("rollups"), as the platform wires it, in the order outbox, rollups,
// rollups, outbox: the table grows as the benchmark runs, and the mean of
// each pair is measured on the same data.
func BenchmarkWritePath(b *testing.B) {
	for _, e := range dbtest.Engines() {
		d := dbtest.Open(b, e)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		ws := workspace.NewService(d, clock)
		if _, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "bench", Timezone: "Europe/Berlin",
			Members: []workspace.MemberSpec{{Email: "owner@bench.test", Role: apikit.RoleOwner}}, Clients: []string{"Globex"}}}}); err != nil {
			b.Fatal(err)
		}
		w, _ := ws.ByName(ctx, "bench")
		p := apikit.Principal{WorkspaceID: w.ID, Role: apikit.RoleOwner}
		logs := map[string]*events.Log{}
		for _, name := range []string{"outbox", "rollups"} {
			log := events.NewLog(d, clock)
			log.OnEmit(webhooks.NewService(d, clock, webhooks.Guard{}, secret.Key{}).Enqueue)
			if name == "rollups" {
				log.WithInsert(reports.NewService(d, clock, areas(d, clock)).Count)
			}
			logs[name] = log
		}
		for _, name := range []string{"outbox", "rollups", "rollups", "outbox"} {
			svc := leads.NewService(d, clock, ws, logs[name])
			b.Run(fmt.Sprintf("%s/lead-create/%s", e, name), func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					s := func(v string) *string { return &v }
					if _, err := svc.Upsert(ctx, p, leads.LeadInput{Name: s(fmt.Sprintf("Person %s %d", name, i)), Company: s("Northwind"),
						EmailWork: s(fmt.Sprintf("%s.%d@northwind.test", name, i)), LinkedInID: s(fmt.Sprintf("%s-%d", name, i))}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/action-sent/%s", e, name), func(b *testing.B) {
				seq, snd := apikit.NewID(), apikit.NewID()
				for b.Loop() {
					ev := events.Event{WorkspaceID: w.ID, SequenceID: seq, SenderID: snd, LeadID: apikit.NewID(), EnrollmentID: apikit.NewID(),
						StepID: "invite", Kind: "action.sent", Data: map[string]any{"action": "invite", "purpose": "sequence", "first_contact": true}}
					if err := d.InTx(ctx, func(ctx context.Context) error { return logs[name].EmitMany(ctx, []events.Event{ev}) }); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
