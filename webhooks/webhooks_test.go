package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// receiver is a local https endpoint that records what it gets and
// answers with status.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	got    []http.Header
	bodies [][]byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{status: 200}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, req.Header.Clone())
		r.bodies = append(r.bodies, b)
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) answer(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

type fixture struct {
	d      *db.DB
	clock  *apikit.FakeClock
	log    *events.Log
	svc    *webhooks.Service
	worker *webhooks.Worker
	p      apikit.Principal
	rec    *receiver
}

var loopback = webhooks.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

func newFixture(t *testing.T, d *db.DB, plan string) *fixture {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	ws := workspace.NewService(d, clock)
	if _, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "acme", Plan: plan,
		Members: []workspace.MemberSpec{{Email: "owner@acme.test", Role: apikit.RoleOwner}}}}}); err != nil {
		t.Fatal(err)
	}
	w, err := ws.ByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{d: d, clock: clock, log: events.NewLog(d, clock), rec: newReceiver(t),
		p: apikit.Principal{WorkspaceID: w.ID, Plan: w.Plan, Role: apikit.RoleManager}}
	f.svc = webhooks.NewService(d, clock, loopback, secret.TestKey())
	f.log.OnEmit(f.svc.Enqueue)
	tlsc := f.rec.Client().Transport.(*http.Transport).TLSClientConfig
	f.worker = f.svc.NewWorker(loopback.Client(tlsc), nil)
	return f
}

// A copy of the database reveals no signing secret: the stored value is
// sealed under the server's key, bound to its webhook, and deliveries are
// still signed with the secret the webhook was created with.
func TestSigningSecretSealed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		f := newFixture(t, d, apikit.PlanPro)
		w, err := f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL + "/hooks", Events: []string{"*"}})
		is.NoErr(err)
		is.True(strings.HasPrefix(w.Secret, "whsec_"))
		is.True(secret.IsSealed([]byte(w.Webhook.Secret)))

		var raw []string
		is.NoErr(d.NewRaw("SELECT secret FROM webhooks").Scan(ctx, &raw))
		is.Equal(len(raw), 1)
		is.True(!strings.Contains(raw[0], "whsec_"))
		is.True(!strings.Contains(raw[0], strings.TrimPrefix(w.Secret, "whsec_")))
		id, _ := secret.KeyID([]byte(raw[0]))
		is.Equal(id, secret.TestKey().ID())
		opened, err := secret.TestKey().OpenString(raw[0], secret.WebhookSecrets.AAD(w.ID))
		is.NoErr(err)
		is.Equal(opened, w.Secret)

		f.emit(t, "lead.created", 1)
		is.Equal(f.tick(t), 1)
		is.NoErr(webhooks.Verify(w.Secret, f.rec.got[0], f.rec.bodies[0], 5*time.Minute, f.clock.Now()))

		// A value moved from another webhook does not open: the delivery
		// fails its attempt instead of being signed with that secret.
		other, err := f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL + "/other", Events: []string{"*"}})
		is.NoErr(err)
		_, err = d.NewRaw("UPDATE webhooks SET secret = ? WHERE id = ?", raw[0], other.ID).Exec(ctx)
		is.NoErr(err)
		f.emit(t, "lead.created", 1)
		is.Equal(f.tick(t), 2)
		is.Equal(f.rec.count(), 2) // only the first webhook's delivery went out
		failed := f.delivery(t, webhooks.Pending)
		is.Equal(len(failed), 1)
		is.Equal(failed[0].WebhookID, other.ID)
		is.True(strings.Contains(*failed[0].LastError, "signing secret"))
	})
}

// A server without a secret key refuses to create a webhook, clearly.
func TestCreateWithoutKey(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		f := newFixture(t, d, apikit.PlanPro)
		svc := webhooks.NewService(d, f.clock, loopback, secret.Key{})
		_, err := svc.Create(context.Background(), f.p, webhooks.CreateInput{URL: f.rec.URL + "/hooks", Events: []string{"*"}})
		is.Equal(apikit.ErrorCode(err), apikit.EConflict)
		is.True(strings.Contains(err.Error(), secret.EnvKey))
		var n []int
		is.NoErr(d.NewRaw("SELECT count(*) FROM webhooks").Scan(context.Background(), &n))
		is.Equal(n[0], 0)
	})
}

// emit writes events of kind in one transaction.
func (f *fixture) emit(t *testing.T, kind string, n int) {
	t.Helper()
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = events.Event{WorkspaceID: f.p.WorkspaceID, Kind: kind, Data: map[string]any{"n": i}}
	}
	if err := f.d.InTx(context.Background(), func(ctx context.Context) error { return f.log.EmitMany(ctx, evs) }); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) tick(t *testing.T) int {
	t.Helper()
	n, err := f.worker.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) delivery(t *testing.T, status string) []webhooks.Delivery {
	t.Helper()
	ds, err := f.svc.Deliveries(context.Background(), f.p, webhooks.DeliveryFilter{Status: status})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestOutboxSignatureAndRetries(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		f := newFixture(t, d, apikit.PlanPro)
		w, err := f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL + "/hooks", Events: []string{"lead.created", "invite.sent"}})
		is.NoErr(err)
		is.True(len(w.Secret) > 40)

		// The outbox: a committed event has its delivery, a rolled-back one
		// none, an unsubscribed type none.
		f.emit(t, "lead.created", 1)
		f.emit(t, "lead.updated", 1)
		err = d.InTx(ctx, func(ctx context.Context) error {
			if err := f.log.EmitMany(ctx, []events.Event{{WorkspaceID: f.p.WorkspaceID, Kind: "lead.created"}}); err != nil {
				return err
			}
			return errors.New("roll back")
		})
		is.True(err != nil)
		is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
			return f.log.EmitMany(ctx, []events.Event{{WorkspaceID: f.p.WorkspaceID, Kind: "action.sent", Data: map[string]any{"action": "invite"}}})
		}))
		is.Equal(len(f.delivery(t, webhooks.Pending)), 2)

		// Sent at once, signed; the receiver verifies it.
		is.Equal(f.tick(t), 2)
		is.Equal(f.rec.count(), 2)
		for i, h := range f.rec.got {
			is.NoErr(webhooks.Verify(w.Secret, h, f.rec.bodies[i], 5*time.Minute, f.clock.Now()))
			is.Equal(h.Get("Content-Type"), "application/json")
		}
		var body map[string]any
		types := map[string]bool{}
		for _, b := range f.rec.bodies {
			is.NoErr(json.Unmarshal(b, &body))
			types[body["type"].(string)] = true
			is.True(body["id"] != "" && body["timestamp"] != "")
			if body["type"] == "lead.created" {
				is.Equal(body["data"].(map[string]any)["n"], 0.0)
			}
		}
		is.Equal(types, map[string]bool{"lead.created": true, "invite.sent": true}) // sent at once, in parallel
		// A changed body or an old timestamp does not verify.
		is.Equal(webhooks.Verify(w.Secret, f.rec.got[0], append(slices.Clone(f.rec.bodies[0]), ' '), 5*time.Minute, f.clock.Now()), webhooks.ErrBadSignature)
		is.Equal(webhooks.Verify(w.Secret, f.rec.got[0], f.rec.bodies[0], 5*time.Minute, f.clock.Now().Add(time.Hour)), webhooks.ErrBadTimestamp)
		is.Equal(webhooks.Verify("whsec_other", f.rec.got[0], f.rec.bodies[0], 5*time.Minute, f.clock.Now()), webhooks.ErrBadSignature)
		is.Equal(len(f.delivery(t, webhooks.Succeeded)), 2)

		// The retry schedule: at once, then after 2, 4, 8 and 16 minutes,
		// the same delivery id each time; then failed.
		f.rec.answer(503)
		f.emit(t, "lead.created", 1)
		start := f.clock.Now()
		is.Equal(f.tick(t), 1)
		var at []time.Duration
		for range 6 {
			next, ok, err := f.worker.NextDue(ctx)
			is.NoErr(err)
			if !ok {
				break
			}
			f.clock.Set(next.Add(-time.Second))
			is.Equal(f.tick(t), 0) // not before its time
			f.clock.Set(next)
			is.Equal(f.tick(t), 1)
			at = append(at, next.Sub(start))
		}
		// Each wait is 2, 4, 8, 16 minutes plus up to a tenth of jitter.
		is.Equal(len(at), 4)
		prev := time.Duration(0)
		for i, wait := range []time.Duration{2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute} {
			got := at[i] - prev
			is.True(got >= wait && got < wait+wait/10)
			prev = at[i]
		}
		failed := f.delivery(t, webhooks.Failed)
		is.Equal(len(failed), 1)
		is.Equal(failed[0].Attempts, 5)
		is.Equal(*failed[0].LastStatusCode, 503)
		ids := map[string]bool{}
		for _, h := range f.rec.got[2:] {
			ids[h.Get(webhooks.HeaderID)] = true
		}
		is.Equal(len(ids), 1)
		is.Equal(f.rec.count(), 7)

		// Replay: a new delivery with the same payload, marked.
		rp, err := f.svc.Replay(ctx, f.p, failed[0].ID)
		is.NoErr(err)
		is.Equal(*rp.ReplayOf, failed[0].ID)
		f.rec.answer(200)
		is.Equal(f.tick(t), 1)
		is.NoErr(json.Unmarshal(f.rec.bodies[len(f.rec.bodies)-1], &body))
		is.Equal(body["replayed"], true)
		is.Equal(body["replay_of"], failed[0].ID)
		is.Equal(body["type"], "lead.created")
		is.NoErr(webhooks.Verify(w.Secret, f.rec.got[len(f.rec.got)-1], f.rec.bodies[len(f.rec.bodies)-1], time.Minute, f.clock.Now()))
		_, err = f.svc.Replay(ctx, f.p, "0193a000-0000-7000-8000-000000000000")
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)

		// The log keeps 30 days.
		f.clock.Set(f.clock.Now().Add(webhooks.Retention + 2*time.Hour))
		f.tick(t)
		is.Equal(len(f.delivery(t, "")), 0)
	})
}

func TestSwitchOffAfterFiftyFailures(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		f := newFixture(t, d, apikit.PlanPro)
		w, err := f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL, Events: []string{"*"}})
		is.NoErr(err)
		f.rec.answer(500)
		f.emit(t, "lead.created", webhooks.SwitchOffAfter+2)
		for {
			f.tick(t)
			next, ok, err := f.worker.NextDue(ctx)
			is.NoErr(err)
			if !ok {
				break
			}
			f.clock.Set(next)
		}
		page, err := f.svc.List(ctx, f.p, 10, 0)
		is.NoErr(err)
		got := page.Data[0]
		is.Equal(got.Enabled, false)
		is.True(got.DisabledAt != nil)
		is.Equal(got.ConsecutiveFailures, webhooks.SwitchOffAfter)
		// Nothing is left pending once it is off.
		is.Equal(len(f.delivery(t, webhooks.Pending)), 0)
		sent := f.rec.count()
		// Switched off: new events get no delivery.
		before := len(f.delivery(t, ""))
		f.emit(t, "lead.created", 1)
		is.Equal(len(f.delivery(t, "")), before)
		f.tick(t)
		is.Equal(f.rec.count(), sent)
		// Turned back on: the count resets and deliveries start again.
		on, err := f.svc.Enable(ctx, f.p, w.ID)
		is.NoErr(err)
		is.Equal(on.Enabled, true)
		is.Equal(on.ConsecutiveFailures, 0)
		f.rec.answer(200)
		f.emit(t, "lead.created", 1)
		is.Equal(f.tick(t), 1)
		is.Equal(len(f.delivery(t, webhooks.Succeeded)), 1)
		// Deleted: no more deliveries; its log stays.
		_, err = f.svc.Delete(ctx, f.p, w.ID)
		is.NoErr(err)
		f.emit(t, "lead.created", 1)
		is.Equal(f.tick(t), 0)
		is.True(len(f.delivery(t, "")) > 0)
	})
}

func TestCreateRules(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		f := newFixture(t, d, apikit.PlanStarter)
		_, err := f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL, Events: []string{"*"}})
		is.Equal(apikit.ErrorCode(err), apikit.EForbidden) // the plan
		f.p.Plan = apikit.PlanPro
		scoped := f.p
		scoped.ClientIDs = []string{"0193a000-0000-7000-8000-000000000001"}
		_, err = f.svc.Create(ctx, scoped, webhooks.CreateInput{URL: f.rec.URL, Events: []string{"*"}})
		is.Equal(apikit.ErrorCode(err), apikit.EForbidden)
		_, err = f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL, Events: []string{"lead.exploded"}})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL, Events: []string{"*", "lead.created"}})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: "http://hooks.example.test", Events: []string{"*"}})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
	})
}

// successes counts the 2xx answers per delivery id.
func (r *receiver) successes() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, h := range r.got {
		out[h.Get(webhooks.HeaderID)]++
	}
	return out
}

func TestReceiverDownThenUp(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		f := newFixture(t, d, apikit.PlanPro)
		_, err := f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL, Events: []string{"*"}})
		is.NoErr(err)
		// Down for 25 minutes: every answer is 502, events keep coming.
		f.rec.answer(502)
		start := f.clock.Now()
		for m := 0; m < 25; m += 5 {
			f.clock.Set(start.Add(time.Duration(m) * time.Minute))
			f.emit(t, "lead.created", 3)
			f.tick(t)
		}
		down := f.rec.count()
		f.rec.mu.Lock()
		f.rec.got, f.rec.bodies = nil, nil
		f.rec.mu.Unlock()
		// Up again: run until nothing is pending.
		f.clock.Set(start.Add(25 * time.Minute))
		f.rec.answer(200)
		for {
			f.tick(t)
			next, ok, err := f.worker.NextDue(ctx)
			is.NoErr(err)
			if !ok {
				break
			}
			f.clock.Set(next)
		}
		is.True(down > 15)
		got := f.rec.successes()
		is.Equal(len(got), 15) // every event delivered
		for id, n := range got {
			if n != 1 {
				t.Errorf("delivery %s succeeded %d times", id, n)
			}
		}
		is.Equal(len(f.delivery(t, webhooks.Succeeded)), 15)
	})
}

func TestTwoWorkersSendEachAttemptOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		if d.Engine != db.Postgres {
			t.Skip("two workers share one database on Postgres; SQLite has one writer")
		}
		is := is.New(t)
		ctx := context.Background()
		f := newFixture(t, d, apikit.PlanPro)
		_, err := f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL, Events: []string{"*"}})
		is.NoErr(err)
		f.emit(t, "lead.created", 600)
		tlsc := f.rec.Client().Transport.(*http.Transport).TLSClientConfig
		a, b := f.svc.NewWorker(loopback.Client(tlsc), nil), f.svc.NewWorker(loopback.Client(tlsc), nil)
		a.Batch, b.Batch = 50, 50
		var wg sync.WaitGroup
		counts := make([]int, 2)
		for i, w := range []*webhooks.Worker{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := w.Tick(ctx)
				is.NoErr(err)
				counts[i] = n
			}()
		}
		wg.Wait()
		got := f.rec.successes()
		is.Equal(len(got), 600)
		for _, n := range got {
			is.Equal(n, 1)
		}
		is.Equal(counts[0]+counts[1], 600)
	})
}

// TestDocsListEveryKind holds docs/WEBHOOKS.md and Kinds together.
func TestDocsListEveryKind(t *testing.T) {
	raw, err := os.ReadFile("../docs/WEBHOOKS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, k := range webhooks.Kinds {
		if !strings.Contains(doc, "| `"+k.Type+"` | "+k.Description+" |") {
			t.Errorf("docs/WEBHOOKS.md does not list %s as the code describes it", k.Type)
		}
	}
	if n := strings.Count(doc, "\n| `"); n != len(webhooks.Kinds) {
		t.Errorf("docs/WEBHOOKS.md lists %d types, the code %d", n, len(webhooks.Kinds))
	}
}

// TestWebhookQueriesUseIndexes explains every query of the outbox, the
// worker and the routes on both engines and fails on a scan of the
// webhook tables.
func TestWebhookQueriesUseIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		f := newFixture(t, d, apikit.PlanPro)
		rec := dbtest.Record(d)
		queries := rec.During(func() {
			w, err := f.svc.Create(ctx, f.p, webhooks.CreateInput{URL: f.rec.URL, Events: []string{"*"}})
			if err != nil {
				t.Fatal(err)
			}
			f.emit(t, "lead.created", 3)
			f.rec.answer(500)
			f.tick(t)
			f.rec.answer(200)
			f.clock.Set(f.clock.Now().Add(3 * time.Minute))
			f.tick(t)
			if _, _, err := f.worker.NextDue(ctx); err != nil {
				t.Fatal(err)
			}
			ds := f.delivery(t, "")
			f.delivery(t, webhooks.Succeeded)
			if _, err := f.svc.Deliveries(ctx, f.p, webhooks.DeliveryFilter{WebhookID: w.ID, Status: webhooks.Failed}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.Replay(ctx, f.p, ds[0].ID); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.List(ctx, f.p, 50, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.Enable(ctx, f.p, w.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.Delete(ctx, f.p, w.ID); err != nil {
				t.Fatal(err)
			}
			if err := f.svc.Purge(ctx); err != nil {
				t.Fatal(err)
			}
		})
		for _, table := range []string{"webhooks", "deliveries"} {
			dbtest.AssertNoScan(t, d, table, "", queries)
		}
	})
}
