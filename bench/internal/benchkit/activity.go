package benchkit

import (
	"context"
	"log"
	"math/rand/v2"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// Subject is what an activity event is about: a client's sequence and
// one of the sequence's senders.
type Subject struct{ Client, Sequence, Sender string }

var intents = []string{"interested", "question", "not_now", "not_interested", "ooo", "wrong_person", "unclear"}

// Activity writes n events of an agency's activity through lg
// (events.Log.EmitMany in transactions of batch events, so that the
// rollups are kept on the write path as in production), spread over days
// days from first, each batch over its share of a ten-hour day (clock is
// set to each batch's time): the steps' actions, enrolments, lead
// creations, acceptances, replies (new threads and later intent changes),
// meetings, bounces and enrolment ends, and events the reports do not
// count, about subjects and leads of leadPool. It returns the events
// written.
func Activity(ctx context.Context, d *db.DB, lg *events.Log, clock *apikit.FakeClock, wsID string, subjects []Subject, leadPool []string,
	first time.Time, n, days, batch int) int {
	t0 := time.Now()
	rng := rand.New(rand.NewPCG(7, 2026))
	perDay := n / days
	var threads []string
	written := 0
	for day := range days {
		open := first.AddDate(0, 0, day).Add(8 * time.Hour)
		for b := 0; b < perDay; b += batch {
			clock.Set(open.Add(time.Duration(float64(10*time.Hour) * float64(b) / float64(perDay))))
			evs := make([]events.Event, 0, batch)
			for range min(batch, perDay-b) {
				s := subjects[rng.IntN(len(subjects))]
				e := events.Event{WorkspaceID: wsID, ClientID: s.Client, SequenceID: s.Sequence, SenderID: s.Sender,
					LeadID: leadPool[rng.IntN(len(leadPool))], EnrollmentID: apikit.NewID(), StepID: "invite"}
				switch r := rng.IntN(1000); {
				case r < 560: // the steps' actions
					a := []string{"profile_view", "invite", "invite", "message", "message", "follow", "like", "email", "email", "inmail"}[rng.IntN(10)]
					e.Kind, e.StepID, e.Data = "action.sent", a, map[string]any{"action": a, "purpose": "sequence"}
				case r < 640:
					e.Kind, e.Data = "enrollment.created", map[string]any{"sequence_id": s.Sequence}
				case r < 690:
					e.Kind, e.SequenceID, e.SenderID, e.EnrollmentID = "lead.created", "", "", ""
				case r < 750:
					e.Kind, e.Data = "invite.accepted", map[string]any{"invited_at": clock.Now().Add(-time.Duration(rng.IntN(10*24)) * time.Hour)}
				case r < 790: // a reply: a new thread, or another intent for an earlier one
					id := apikit.NewID()
					data := map[string]any{"thread_id": id, "intent": intents[rng.IntN(len(intents))]}
					if len(threads) > 0 && rng.IntN(5) == 0 {
						data["thread_id"] = threads[rng.IntN(len(threads))]
					} else {
						data["message_id"] = apikit.NewID()
						threads = append(threads, id)
					}
					e.Kind, e.Data = "message.classified", data
				case r < 793:
					e.Kind = "meeting.booked"
				case r < 800:
					e.Kind = "email.bounced"
				case r < 860:
					e.Kind = []string{"enrollment.finished", "enrollment.exited", "enrollment.replied", "enrollment.stopped"}[rng.IntN(4)]
				default: // what the reports do not count
					e.Kind, e.SequenceID, e.Data = "lead.updated", "", map[string]any{"fields": []string{"headline"}}
				}
				evs = append(evs, e)
			}
			Check(d.InTx(ctx, func(ctx context.Context) error { return lg.EmitMany(ctx, evs) }))
			written += len(evs)
		}
		if day%30 == 29 {
			log.Printf("%d days, %d events, %s", day+1, written, time.Since(t0).Round(time.Second))
		}
	}
	return written
}
