package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sandbox"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/setup"
)

var berlin, _ = time.LoadLocation("Europe/Berlin")

func TestRunnerSendsASequence(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Berlin CTOs")
		ann := e.lead("Ann Lee", nil)
		e.net.Script(ann, sandbox.Outcome{Accept: true, AcceptAfter: 3 * time.Hour})
		e.activate("Berlin CTOs")
		res := e.enrol("Berlin CTOs", ann)
		is.Equal(res.Enrolled, 1)

		// 08:00 in Berlin: outside the schedule until 09:00.
		e.runUntil(monday.Add(30 * time.Minute))
		en := e.enrollment(ann)
		is.Equal(*en.WaitingFor, "outside_schedule")
		is.True(en.NextRunAt.Equal(time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)))

		e.runUntil(monday.Add(24 * time.Hour))
		en = e.enrollment(ann)
		is.Equal(en.Status, enrollments.Finished)
		perf := e.net.Performed()
		is.Equal(len(perf), 3) // visit, invite, message
		is.Equal(string(perf[0].Action), "profile_view")
		is.Equal(string(perf[1].Action), "invite")
		is.True(perf[1].WithNote)
		is.Equal(string(perf[2].Action), "message")
		is.True(perf[2].At.Equal(time.Date(2026, 11, 2, 11, 0, 0, 0, time.UTC))) // as the acceptance came in
		is.Equal(e.kinds(ann), []string{"lead.created", "enrollment.created", "action.sent", "action.sent", "invite.accepted", "action.sent", "enrollment.finished"})
		e.noViolations()
	})
}

// TestCommitOutsideWorkingHours: leads enrolled while the first step's
// sender is outside its schedule wait for its window from the start, as
// the runner's first look would make them, instead of each running once
// to learn it, also in a sequence that is activated later; inside the
// window they are due at once.
func TestCommitOutsideWorkingHours(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Plain", "Spread", "anna")
		e.activate("Plain")
		early := e.lead("Early Bird", nil)
		e.enrol("Plain", early) // 08:00 in Berlin; anna works from 09:00
		en := e.enrollment(early)
		opens := monday.Add(time.Hour)
		is.Equal(*en.WaitingFor, "outside_schedule")
		is.True(en.NextRunAt.Equal(opens))
		is.True(en.WaitingUntil.Equal(opens))
		is.Equal(*en.WaitingSenderID, e.ids["anna"])
		is.Equal(*en.WaitingAction, "profile_view")
		held := e.lead("Held Back", nil)
		e.enrol("Spread", held) // a draft: held, and it waits for the window too
		en = e.enrollment(held)
		is.True(en.Held && *en.WaitingFor == "outside_schedule" && en.NextRunAt.Equal(opens))
		e.activate("Spread")
		is.Equal(e.runUntil(opens.Add(-time.Minute)), 0) // nothing runs before the window
		e.runUntil(opens.Add(time.Hour))
		is.Equal(e.enrollment(early).Status, enrollments.Finished) // viewed when the window opened
		is.Equal(e.enrollment(held).Status, enrollments.Finished)  // activated before the window: viewed in it

		late := e.lead("In Hours", nil)
		e.enrol("Plain", late) // 10:00 in Berlin
		en = e.enrollment(late)
		is.True(en.WaitingFor == nil && en.NextRunAt.Equal(e.clock.Now()))
	})
}

func TestCapsAndScheduleOverDays(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Berlin CTOs", "anna")
		e.activate("Berlin CTOs")
		var ids []string
		for i := range 8 {
			ids = append(ids, e.lead("Lead "+string(rune('A'+i)), nil))
		}
		e.enrol("Berlin CTOs", ids...)
		// Friday night: anna invites at most 3 a working day.
		runs := e.runUntil(time.Date(2026, 11, 6, 23, 0, 0, 0, time.UTC))
		perDay := map[string]int{}
		for _, p := range e.net.Performed() {
			if p.Action == senders.Invite {
				perDay[p.Day]++
			}
		}
		is.Equal(perDay, map[string]int{"2026-11-02": 3, "2026-11-03": 3, "2026-11-04": 2})
		e.noViolations()
		// Never polled: each enrollment ran a handful of times, not once a tick.
		is.True(runs < 8*20)
		// The budgets say the same as the sandbox.
		b, err := e.senders.Budgets(context.Background(), e.p, e.ids["anna"])
		is.NoErr(err)
		is.Equal(b.InviteWeek.Used, 8)
	})
}

func TestReplyStopAndAutoReplies(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Berlin CTOs", "Plain", "Spread", "anna")
		e.activate("Berlin CTOs")
		ann, bo := e.lead("Ann Lee", nil), e.lead("Bo Chen", nil)
		e.net.Script(ann, sandbox.Outcome{})
		e.net.Script(bo, sandbox.Outcome{})
		e.enrol("Berlin CTOs", ann, bo)
		e.runUntil(monday.Add(4 * time.Hour))
		is.Equal(*e.enrollment(ann).WaitingFor, "awaiting_acceptance")
		// Ann answers the invitation's note while the enrollment waits.
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["anna"], LeadID: ann, At: e.clock.Now(), Body: "Sounds good, let's talk."})
		e.runUntil(monday.Add(12 * time.Hour))
		is.Equal(e.enrollment(ann).Status, enrollments.Replied)
		l, err := e.leads.Get(ctx, e.p, ann)
		is.NoErr(err)
		is.True(l.Replied)
		kinds := e.kinds(ann)
		is.Equal(kinds[len(kinds)-2:], []string{"reply.received", "enrollment.replied"})

		// A lead who replied is not enrolled anew by mistake: the runner stops it.
		e.activate("Plain")
		e.enrol("Plain", ann)
		e.runUntil(monday.Add(14 * time.Hour))
		var statuses []string
		is.NoErr(d.NewSelect().Table("enrollments").Column("status").Where("lead_id = ?", ann).OrderExpr("created_at").Scan(ctx, &statuses))
		is.Equal(statuses, []string{"replied", "replied"})

		// An out-of-office reply delays the next step by three days. Monday
		// 20:00 in Berlin: Cy waits for Tuesday's window, then for the reply.
		cy := e.lead("Cy Young", nil)
		e.activate("Spread")
		e.enrol("Spread", cy)
		e.runUntil(monday.Add(12 * time.Hour))
		e.net.Deliver(senders.Inbound{Kind: senders.InboundReply, SenderID: e.ids["anna"], LeadID: cy, At: e.clock.Now(), AutoReply: true, Body: "Out of office"})
		e.runUntil(e.clock.Now().Add(time.Minute))
		en := e.enrollment(cy)
		is.True(en.NextRunAt.Equal(e.clock.Now().Add(-time.Minute).Add(engine.OutOfOfficeDelay)))
		is.Equal(en.Status, enrollments.Active)
		is.Equal(*en.WaitingFor, "out_of_office")
		e.noViolations()
	})
}

// lossy performs through the sandbox, then loses the answer. A process
// that lives on can ask (Lookup); one that died after the transport
// accepted (gone) never looks it up.
type lossy struct {
	*sandbox.Network
	gone bool
}

func (l lossy) Perform(ctx context.Context, req senders.Request) (senders.Result, error) {
	if _, err := l.Network.Perform(ctx, req); err != nil {
		return senders.Result{}, err
	}
	return senders.Result{}, errors.New("connection reset after the request was sent")
}

func (l lossy) Lookup(ctx context.Context, req senders.Request) (senders.Result, bool, error) {
	if l.gone {
		return senders.Result{}, false, errors.New("the process is gone")
	}
	return l.Network.Lookup(ctx, req)
}

// TestLostAnswerIsLookedUpAtOnce: an action whose answer was lost is
// looked up right away (senders.Send), as a member's reply is: found, it
// is recorded sent in the same run, once.
func TestLostAnswerIsLookedUpAtOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Plain")
		e.activate("Plain")
		ann := e.lead("Ann Lee", nil)
		e.enrol("Plain", ann)
		e.clock.Set(monday.Add(2 * time.Hour)) // inside the window
		_, err := e.pl.NewRunner(map[string]senders.Transport{senders.TransportSandbox: lossy{Network: e.net}}).Tick(context.Background())
		is.NoErr(err)
		is.Equal(len(e.net.Performed()), 1)
		is.Equal(e.enrollment(ann).Status, enrollments.Finished)
	})
}

func TestCrashBetweenSendAndRecordDoesNotSendTwice(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Plain", "anna")
		e.activate("Plain")
		ann := e.lead("Ann Lee", nil)
		e.enrol("Plain", ann)
		e.clock.Set(monday.Add(2 * time.Hour)) // inside the window

		crash := e.pl.NewRunner(map[string]senders.Transport{senders.TransportSandbox: lossy{Network: e.net, gone: true}})
		_, err := crash.Tick(ctx)
		is.NoErr(err) // logged, not fatal: other enrollments go on
		is.Equal(len(e.net.Performed()), 1)
		is.Equal(e.enrollment(ann).Status, enrollments.Active)

		// Before the lease ends nobody touches it; after, the runner asks
		// the transport about the key and records the one send.
		n, err := e.runner.Tick(ctx)
		is.NoErr(err)
		is.Equal(n, 0)
		e.clock.Advance(engine.DefaultLease + time.Second)
		_, err = e.runner.Tick(ctx)
		is.NoErr(err)
		is.Equal(len(e.net.Performed()), 1)
		is.Equal(e.enrollment(ann).Status, enrollments.Finished)
		sent := 0
		for _, k := range e.kinds(ann) {
			if k == "action.sent" {
				sent++
			}
		}
		is.Equal(sent, 1)
		b, err := e.senders.Budgets(ctx, e.p, e.ids["anna"])
		is.NoErr(err)
		is.Equal(b.Actions[0].Used, 1) // profile_view: taken once
	})
}

// recording performs through the sandbox and keeps the requests Perform
// and Lookup receive; while losing, it loses Perform's answer, and Lookup
// fails too.
type recording struct {
	*sandbox.Network
	mu              sync.Mutex
	losing          bool
	performed, seen []senders.Request
}

func (r *recording) Perform(ctx context.Context, req senders.Request) (senders.Result, error) {
	res, err := r.Network.Perform(ctx, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.performed = append(r.performed, req)
	if err == nil && r.losing {
		return senders.Result{}, errors.New("502 after the request was sent")
	}
	return res, err
}

func (r *recording) Lookup(ctx context.Context, req senders.Request) (senders.Result, bool, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req)
	losing := r.losing
	r.mu.Unlock()
	if losing {
		return senders.Result{}, false, errors.New("502 to the lookup too")
	}
	return r.Network.Lookup(ctx, req)
}

// TestRecoveredLookupGetsTheOriginalRequest: after a restart, the runner
// asks the transport about an action of unknown outcome with the request
// the first run performed (the texts, the note, the lead), so that a
// provider without idempotency keys can look for what it sent.
func TestRecoveredLookupGetsTheOriginalRequest(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, mailSequences, "Notes")
		e.activate("Notes")
		e.activate("Mail only")
		ann, bob := e.lead("Ann Lee", nil), e.lead("Bob Roe", nil)
		e.enrol("Notes", ann)
		e.enrol("Mail only", bob)
		e.clock.Set(monday.Add(2 * time.Hour)) // inside the windows

		rec := &recording{Network: e.net, losing: true}
		_, err := e.pl.NewRunner(map[string]senders.Transport{senders.TransportSandbox: rec}).Tick(ctx)
		is.NoErr(err)
		is.Equal(len(rec.performed), 2)
		is.Equal(len(rec.seen), 2) // looked up at once, in vain: the outcome stays unknown
		is.Equal(deref(e.enrollment(ann).WaitingFor), enrollments.WaitSending)

		// A new runner (a restart), after the lease.
		rec.losing = false
		e.clock.Advance(engine.DefaultLease + time.Second)
		_, err = e.pl.NewRunner(map[string]senders.Transport{senders.TransportSandbox: rec}).Tick(ctx)
		is.NoErr(err)
		is.Equal(len(rec.performed), 2) // found, not sent again
		is.Equal(len(rec.seen), 4)
		byKey := map[string]senders.Request{}
		for _, r := range rec.performed {
			byKey[r.Key] = r
		}
		for _, got := range rec.seen {
			want, ok := byKey[got.Key]
			is.True(ok)
			is.Equal(got.Sender.ID, want.Sender.ID)
			got.Sender, want.Sender = nil, nil
			is.Equal(got, want)
		}
		is.Equal(byKey[rec.seen[0].Key].Note+byKey[rec.seen[1].Key].Note, "Hi Ann") // the invitation's note
		is.Equal(e.enrollment(ann).Status, enrollments.Finished)
		is.Equal(e.enrollment(bob).Status, enrollments.Active)
		v := e.thread(bob) // the recovered email lands in its thread, as sent
		is.Equal(len(v.Messages), 1)
		is.Equal(*v.Messages[0].Subject, "Hello Bob")
		is.Equal(v.Messages[0].Body, "Hi Bob, a question.")
	})
}

func TestTransportErrorsRetryFailAndRecover(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Plain", "anna")
		e.activate("Plain")
		ann, bo := e.lead("Ann Lee", nil), e.lead("Bo Chen", nil)
		e.enrol("Plain", ann)
		transient := &senders.TransportError{Kind: senders.Transient, Code: "timeout", Message: "The provider timed out."}
		e.net.FailNext(e.ids["anna"], transient, transient, transient, transient)
		e.runUntil(monday.Add(6 * time.Hour))
		en := e.enrollment(ann)
		is.Equal(en.Status, enrollments.Failed) // after 4 attempts, not forever
		is.Equal(*en.LastErrorCode, "timeout")
		is.Equal(len(e.net.Performed()), 0)

		n, err := e.svc.Recover(ctx, e.p, enrollments.RecoverInput{SequenceID: e.ids["Plain"]})
		is.NoErr(err)
		is.Equal(n, 1)
		e.runUntil(monday.Add(7 * time.Hour))
		is.Equal(e.enrollment(ann).Status, enrollments.Finished)

		// A permanent error fails at once; a sender-level one changes health.
		e.enrol("Plain", bo)
		e.net.FailNext(e.ids["anna"], &senders.TransportError{Kind: senders.SenderLevel, Code: "auth", Signal: senders.SignalAuthFailed, Message: "Session expired."})
		e.runUntil(monday.Add(8 * time.Hour))
		en = e.enrollment(bo)
		is.Equal(en.Status, enrollments.Active)
		is.Equal(*en.WaitingFor, senders.SignalAuthFailed) // why-not-sending names the transport's failure
		h, err := e.senders.Health(ctx, e.p, e.ids["anna"])
		is.NoErr(err)
		is.Equal(h.State, senders.Disconnected)
		e.noViolations()
	})
}

func TestWaitsAcrossDaylightSaving(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		// Friday 23 October 2026, 10:00 in Berlin (CEST); clocks go back on
		// Sunday 25 October.
		e := newEngine(t, d, `      - name: Slow
        client: Globex
        senders: [anna]
        steps:
          - {id: visit, type: profile_view}
          - {id: gap, type: wait, days: 1, working_days: true}
          - {id: again, type: profile_view}
          - {id: later, type: wait, days: 2}
          - {id: third, type: profile_view}
`)
		e.clock.Set(time.Date(2026, 10, 23, 8, 0, 0, 0, time.UTC))
		q, err := e.seqs.ByName(context.Background(), e.p.WorkspaceID, "Slow")
		is.NoErr(err)
		e.ids["Slow"] = q.ID
		e.activate("Slow")
		ann := e.lead("Ann Lee", nil)
		e.enrol("Slow", ann)
		e.runUntil(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		var at []string
		for _, p := range e.net.Performed() {
			at = append(at, p.At.In(berlin).Format("Mon 2006-01-02 15:04"))
		}
		// One working day after Friday 10:00 is Monday 10:00 (CET now);
		// two calendar days later is Wednesday 10:00.
		is.Equal(at, []string{"Fri 2026-10-23 10:00", "Mon 2026-10-26 10:00", "Wed 2026-10-28 10:00"})
		e.noViolations()
	})
}

func TestTwoRunnersOnePostgres(t *testing.T) {
	t.Parallel()
	if len(dbtest.Engines()) < 2 {
		t.Skip(dbtest.EnvPostgres + " is not set")
	}
	is := is.New(t)
	d := dbtest.Open(t, db.Postgres)
	e := newEngine(t, d, "", "Spread", "anna", "ben")
	e.due("Spread", 60)
	other := e.pl.NewRunner(map[string]senders.Transport{senders.TransportSandbox: e.net})
	// Each runner also runs its batches on four workers.
	e.runner.Batch, other.Batch = 5, 5
	e.runner.Workers, other.Workers = 4, 4
	var wg sync.WaitGroup
	for _, r := range []*engine.Runner{e.runner, other} {
		wg.Go(func() {
			if _, err := r.Tick(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	keys := map[string]int{}
	perSender := map[string]int{}
	for _, p := range e.net.Performed() {
		keys[p.Key]++
		perSender[p.SenderID]++
	}
	for k, n := range keys {
		if n != 1 {
			t.Fatalf("key %s performed %d times", k, n)
		}
	}
	is.Equal(perSender[e.ids["anna"]], 10) // anna's cap of 10 views, never more
	is.True(perSender[e.ids["ben"]] == 50)
	e.noViolations()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestInvitationNotesPerMonth(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Notes", "Fallback")
		e.activate("Notes")
		e.activate("Fallback")
		var waiting, fallback []string
		for i := range 7 {
			waiting = append(waiting, e.lead(fmt.Sprintf("Wait %d", i), nil))
			fallback = append(fallback, e.lead(fmt.Sprintf("Fall %d", i), nil))
		}
		e.enrol("Notes", waiting...)
		e.runUntil(monday.Add(12 * time.Hour))
		e.enrol("Fallback", fallback...)
		e.runUntil(monday.Add(36 * time.Hour))
		notes, plain := 0, 0
		for _, p := range e.net.Performed() {
			if p.WithNote {
				notes++
			} else {
				plain++
			}
		}
		is.Equal(notes, 5) // ben has no premium: 5 notes a month
		is.Equal(plain, 7) // the fallback sends without its note
		quota := 0
		for _, id := range waiting {
			if en := e.enrollment(id); deref(en.WaitingFor) == "note_quota" {
				quota++
				is.True(en.NextRunAt.Equal(time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC))) // 1 December in Berlin
			}
		}
		is.Equal(quota, 2)
		e.noViolations()
	})
}

func TestPausedSequencesHoldTheirEnrollments(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Plain")
		ann := e.lead("Ann Lee", nil)
		e.enrol("Plain", ann) // a draft: enrolled, held
		e.runUntil(monday.Add(3 * time.Hour))
		is.Equal(len(e.net.Performed()), 0)
		e.activate("Plain")
		_, err := e.seqs.Pause(ctx, e.p, e.ids["Plain"])
		is.NoErr(err)
		e.runUntil(monday.Add(4 * time.Hour))
		is.Equal(len(e.net.Performed()), 0)
		e.activate("Plain")
		e.runUntil(monday.Add(5 * time.Hour))
		is.Equal(len(e.net.Performed()), 1)
		is.Equal(e.enrollment(ann).Status, enrollments.Finished)
	})
}

func countKind(t *testing.T, d *db.DB, kind string) int {
	t.Helper()
	n, err := d.NewSelect().Table("events").Where("kind = ?", kind).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func TestAlertsAndEnrichment(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Berlin CTOs", "Notes")
		// The last Monday of November, so that December and its fresh
		// notes are a week away.
		start := monday.AddDate(0, 0, 21)
		e.clock.Set(start)
		e.activate("Berlin CTOs")
		e.activate("Notes")
		var ids, notes []string
		for i := range 8 {
			ids = append(ids, e.lead(fmt.Sprintf("Lead %d", i), nil))
			notes = append(notes, e.lead(fmt.Sprintf("Note %d", i), nil))
		}
		e.enrol("Berlin CTOs", ids...)
		e.enrol("Notes", notes...)
		// Enrichment of two more leads, one of them do-not-contact.
		fresh, dnc := e.lead("Fresh Face", nil), e.lead("Do Not", nil)
		_, err := e.leads.Suppress(ctx, e.p, dnc)
		is.NoErr(err)
		_, err = e.leads.Enrich(ctx, e.p, leads.EnrichInput{LeadIDs: []string{fresh, dnc}})
		is.NoErr(err)

		e.runUntil(start.Add(15 * time.Hour))                // 23:00 in Berlin
		is.Equal(countKind(t, d, engine.EventRunningDry), 1) // anna, once on Monday
		l, err := e.leads.Get(ctx, e.p, fresh)
		is.NoErr(err)
		is.True(l.EnrichedAt != nil)
		is.Equal(l.ProfileData["source"], "sandbox")
		l, err = e.leads.Get(ctx, e.p, dnc)
		is.NoErr(err)
		is.True(l.EnrichedAt == nil) // refused: do-not-contact
		enriched := 0
		for _, p := range e.net.Performed() {
			if p.Purpose == "enrichment" {
				enriched++
			}
		}
		is.Equal(enriched, 1)

		e.runUntil(start.Add(39 * time.Hour))                // Tuesday 23:00 in Berlin
		is.Equal(countKind(t, d, engine.EventRunningDry), 2) // and once on Tuesday
		// Notes: ben's 5 notes went out on Monday; the other 3 wait for
		// December. A day later the sequence counts as stalled, once.
		is.Equal(countKind(t, d, sequences.EventStalled), 1)
		q, err := e.seqs.ByID(ctx, e.p.WorkspaceID, e.ids["Notes"])
		is.NoErr(err)
		is.True(q.StalledAt != nil)
		// On 1 December the notes renew, the invitations go, and the
		// sequence recovers.
		e.runUntil(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
		is.Equal(countKind(t, d, sequences.EventRecovered), 1)
		e.noViolations()
	})
}

func TestWhyNotSending(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Berlin CTOs", "Plain", "anna")
		why := e.why
		w, m := why("Plain")
		is.Equal(w.Sending, false)
		is.True(m["sequence_not_active"].Code != "")
		is.True(m["no_active_enrollments"].Code != "")

		e.activate("Berlin CTOs")
		var ids []string
		for i := range 6 {
			ids = append(ids, e.lead(fmt.Sprintf("Lead %d", i), nil))
		}
		e.enrol("Berlin CTOs", ids...)
		e.runUntil(monday.Add(30 * time.Minute)) // 08:30 in Berlin
		w, m = why("Berlin CTOs")
		is.Equal(w.Sending, true)
		is.Equal(*m["outside_schedule"].Count, 6)
		is.True(m["outside_schedule"].Until.Equal(monday.Add(time.Hour)))

		e.runUntil(monday.Add(6 * time.Hour))
		w, m = why("Berlin CTOs")
		is.True(w.Sending) // capped until tomorrow, still sending
		r := m["daily_cap_reached"]
		is.Equal(*r.Count, 3) // anna invites 3 a day
		is.Equal(*r.SenderID, e.ids["anna"])
		is.Equal(r.Action, "invite")
		is.True(r.Until.Equal(time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC))) // Tuesday 09:00 in Berlin
		_, waits := m["all_waiting"]
		is.True(!waits) // three wait for an acceptance, but not all

		// A failure, a do-not-contact lead and a suspended workspace each show.
		_, err := e.leads.Suppress(ctx, e.p, ids[0])
		is.NoErr(err)
		e.net.FailNext(e.ids["anna"], &senders.TransportError{Kind: senders.Permanent, Code: "profile_not_found", Message: "No such profile."})
		e.runUntil(monday.Add(26 * time.Hour))
		_, m = why("Berlin CTOs")
		is.Equal(*m["failed_enrollments"].Count, 1)
		is.True(strings.Contains(m["failed_enrollments"].Remedy, "recover"))
		is.Equal(*m["leads_do_not_contact"].Count, 1)

		// A sender paused by the setup holds its enrollments.
		f, err := setup.Decode(strings.NewReader(strings.Replace(engineSetup, "premium: true,", "premium: true, status: paused,", 1)))
		is.NoErr(err)
		_, err = setup.Apply(ctx, d, e.clock, secret.TestKey(), f)
		is.NoErr(err)
		e.enrol("Berlin CTOs", e.lead("Late Comer", nil))
		e.runUntil(monday.Add(50 * time.Hour))
		w, m = why("Berlin CTOs")
		is.True(m["sender_paused"].Count != nil)
		is.True(m["no_usable_sender"].Code == "") // the mailbox can still send
		is.True(w.Sending)
	})
}

func TestBlacklistAddedLaterStopsTheEnrollment(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		e := newEngine(t, d, "", "Berlin CTOs")
		e.activate("Berlin CTOs")
		ann := e.lead("Ann Lee", map[string]any{"company": "Initrode"})
		e.net.Script(ann, sandbox.Outcome{})
		e.enrol("Berlin CTOs", ann)
		e.runUntil(monday.Add(3 * time.Hour))
		is.Equal(len(e.net.Performed()), 2) // visit and invite
		f, err := setup.Decode(strings.NewReader(strings.Replace(engineSetup, "companies: [Umbrella]", "companies: [Umbrella, Initrode]", 1)))
		is.NoErr(err)
		_, err = setup.Apply(ctx, d, e.clock, secret.TestKey(), f)
		is.NoErr(err)
		e.runUntil(monday.Add(10 * 24 * time.Hour))
		en := e.enrollment(ann)
		is.Equal(en.Status, enrollments.Stopped)
		is.Equal(*en.LastErrorCode, "blacklisted")
		is.Equal(len(e.net.Performed()), 2)
		e.noViolations()
	})
}

// TestGroupIsolatesAnEnrollmentsError runs enrollments in groups that
// share their transactions (SQLite; Postgres runs each alone): one
// enrollment whose outcome cannot be recorded rolls its group's
// transaction back, the others are recorded alone at once, and it keeps
// its lease until a later run asks the transport about its key. Nothing is
// performed twice.
func TestGroupIsolatesAnEnrollmentsError(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Spread", "anna")
		e.runner.Group, e.runner.Workers = 8, 1
		ids := e.due("Spread", 20)
		// A sender-level error with a signal the runner does not know: its
		// outcome cannot be recorded.
		e.net.FailNext(e.ids["anna"], &senders.TransportError{Kind: senders.SenderLevel, Code: "odd", Signal: "odd", Message: "An odd answer."})
		_, err := e.runner.Tick(context.Background())
		is.NoErr(err)
		finished, held := 0, 0
		for _, id := range ids {
			switch en := e.enrollment(id); en.Status {
			case enrollments.Finished:
				finished++
			case enrollments.Active:
				held++
				is.Equal(deref(en.WaitingFor), "sending")
			}
		}
		is.Equal(finished, 19)
		is.Equal(held, 1)

		// After its lease a run asks the transport, which never performed
		// the failed call, and sends it then.
		e.runUntil(monday.Add(3 * time.Hour))
		keys := map[string]int{}
		for _, p := range e.net.Performed() {
			keys[p.Key]++
		}
		is.Equal(len(keys), 20)
		for _, n := range keys {
			is.Equal(n, 1) // each key once
		}
		for _, id := range ids {
			is.Equal(e.enrollment(id).Status, enrollments.Finished)
		}
		e.noViolations()
	})
}

// TestRunnerSavesWaitForTheCommit: in a runner transaction, enrollment
// saves are written together just before the commit: an enrollment saved
// twice keeps both saves' columns, the later value winning, and those
// whose changed columns match are written by one statement.
func TestRunnerSavesWaitForTheCommit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEngine(t, d, "", "Berlin CTOs")
		e.activate("Berlin CTOs")
		var leadIDs []string
		for i := range 3 {
			leadIDs = append(leadIDs, e.lead(fmt.Sprintf("Saved %d", i), nil))
		}
		e.enrol("Berlin CTOs", leadIDs...)
		var ids []string
		for _, l := range leadIDs {
			ids = append(ids, e.enrollment(l).ID)
		}
		later := monday.Add(50 * time.Hour)
		ctx := enrollments.Batched(context.Background())
		st := e.svc.Store()
		is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
			es, err := st.ByIDsForRun(ctx, ids)
			is.NoErr(err)
			first, second, third := es[ids[0]], es[ids[1]], es[ids[2]]
			reason := "test_wait"
			first.WaitingFor = &reason
			is.NoErr(st.Save(ctx, first))
			first.NextRunAt, first.Attempt = &later, 3
			is.NoErr(st.Save(ctx, first))
			for _, x := range []*enrollments.Enrollment{second, third} {
				x.WaitingFor = &reason
				is.NoErr(st.Save(ctx, x))
			}
			// Not written yet: the transaction reads the rows as they were.
			var waiting int
			is.NoErr(d.IDB(ctx).NewSelect().Table("enrollments").ColumnExpr("count(*)").Where("waiting_for = ?", reason).Scan(ctx, &waiting))
			is.Equal(waiting, 0)
			return nil
		}))
		got := e.enrollment(leadIDs[0])
		is.Equal(*got.WaitingFor, "test_wait")
		is.True(got.NextRunAt.Equal(later))
		is.Equal(got.Attempt, 3)
		for _, l := range leadIDs[1:] {
			x := e.enrollment(l)
			is.Equal(*x.WaitingFor, "test_wait")
			is.Equal(x.Attempt, 0)
		}
	})
}
