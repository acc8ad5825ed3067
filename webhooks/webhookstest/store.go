// Package webhookstest is the contract of webhooks.Store: one suite that
// every store runs, on every engine it serves.
package webhookstest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/webhooks"
)

// Open returns a fresh store and a workspace it may write webhooks to.
type Open func(t *testing.T) (st webhooks.Store, workspaceID string)

// TestStore runs the contract of webhooks.Store on the stores open makes,
// one fresh store per test.
func TestStore(t *testing.T, open Open) {
	t.Run("InsertAndRead", func(t *testing.T) { insertAndRead(t, open) })
	t.Run("Subscribed", func(t *testing.T) { subscribed(t, open) })
	t.Run("Deliveries", func(t *testing.T) { deliveries(t, open) })
	t.Run("Claim", func(t *testing.T) { claim(t, open) })
	t.Run("Attempts", func(t *testing.T) { attempts(t, open) })
	t.Run("FailuresAndSwitchOff", func(t *testing.T) { failures(t, open) })
	t.Run("PurgeAndPending", func(t *testing.T) { purge(t, open) })
}

var at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func webhook(ws string, created time.Time, events ...string) *webhooks.Webhook {
	return &webhooks.Webhook{ID: apikit.NewID(), WorkspaceID: ws, URL: "https://hooks.example.com/leadline", Events: events,
		Secret: "sealed", Enabled: true, CreatedAt: created, UpdatedAt: created}
}

func delivery(w *webhooks.Webhook, due time.Time) webhooks.Delivery {
	return webhooks.Delivery{ID: apikit.NewID(), WorkspaceID: w.WorkspaceID, WebhookID: w.ID, EventID: apikit.NewID(), Type: "lead.created",
		Payload: `{"type":"lead.created"}`, Status: webhooks.Pending, NextAttemptAt: &due, CreatedAt: due, UpdatedAt: due}
}

func ids(ds []webhooks.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// insertAndRead: an inserted webhook reads back in its workspace only,
// while it is not deleted; an update writes the columns named and
// updated_at; the list holds the live webhooks, oldest first, with their
// total; ByIDs finds deleted ones too and leaves unknown ids out.
func insertAndRead(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws := open(t)
	a, b := webhook(ws, at, "*"), webhook(ws, at.Add(time.Minute), "lead.created", "action.sent")
	is.NoErr(st.Insert(ctx, b))
	is.NoErr(st.Insert(ctx, a))
	got, err := st.Live(ctx, ws, b.ID)
	is.NoErr(err)
	is.Equal(got.Events, webhooks.Types{"lead.created", "action.sent"})
	is.True(got.Enabled)
	_, err = st.Live(ctx, apikit.NewID(), b.ID) // another workspace
	is.True(db.IsNoRows(err))

	page, total, err := st.List(ctx, ws, 10, 0)
	is.NoErr(err)
	is.Equal(total, 2)
	is.Equal([]string{page[0].ID, page[1].ID}, []string{a.ID, b.ID})

	deleted := at.Add(time.Hour)
	b.DeletedAt, b.Enabled, b.UpdatedAt, b.URL = &deleted, false, deleted, "https://elsewhere.example.com"
	is.NoErr(st.Update(ctx, b, "deleted_at", "enabled")) // url is not written
	_, err = st.Live(ctx, ws, b.ID)
	is.True(db.IsNoRows(err))
	page, total, err = st.List(ctx, ws, 10, 0)
	is.NoErr(err)
	is.Equal(total, 1)
	is.Equal(page[0].ID, a.ID)

	all, err := st.ByIDs(ctx, []string{b.ID, apikit.NewID()})
	is.NoErr(err)
	is.Equal(len(all), 1)
	is.True(all[0].DeletedAt != nil && all[0].DeletedAt.Equal(deleted))
	is.True(all[0].UpdatedAt.Equal(deleted))
	is.Equal(all[0].URL, "https://hooks.example.com/leadline")
	none, err := st.ByIDs(ctx, nil)
	is.NoErr(err)
	is.Equal(len(none), 0)
}

// subscribed: a workspace's enabled webhooks that were not deleted are
// its subscribers; a workspace without any has none.
func subscribed(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws := open(t)
	none, err := st.Subscribed(ctx, ws)
	is.NoErr(err)
	is.Equal(len(none), 0)
	on, off, gone := webhook(ws, at, "*"), webhook(ws, at, "*"), webhook(ws, at, "*")
	off.Enabled = false
	deleted := at
	gone.DeletedAt = &deleted
	for _, w := range []*webhooks.Webhook{on, off, gone} {
		is.NoErr(st.Insert(ctx, w))
	}
	got, err := st.Subscribed(ctx, ws)
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.Equal(got[0].ID, on.ID)
	none, err = st.Subscribed(ctx, apikit.NewID())
	is.NoErr(err)
	is.Equal(len(none), 0)
}

// deliveries: more than one statement's worth of deliveries are inserted;
// a delivery reads back in its workspace only; the log holds the latest
// updated first, of one webhook or status when asked, at most limit.
func deliveries(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws := open(t)
	a, b := webhook(ws, at, "*"), webhook(ws, at, "*")
	is.NoErr(st.Insert(ctx, a))
	is.NoErr(st.Insert(ctx, b))
	var ds []webhooks.Delivery
	for i := range 501 {
		ds = append(ds, delivery(a, at.Add(time.Duration(i)*time.Second)))
	}
	last := delivery(b, at.Add(time.Hour))
	last.Status = webhooks.Succeeded
	is.NoErr(st.InsertDeliveries(ctx, append(ds, last)))
	got, err := st.Delivery(ctx, ws, ds[7].ID)
	is.NoErr(err)
	is.Equal(got.WebhookID, a.ID)
	is.Equal(got.Payload, ds[7].Payload)
	_, err = st.Delivery(ctx, apikit.NewID(), ds[7].ID) // another workspace
	is.True(db.IsNoRows(err))

	log, err := st.Deliveries(ctx, ws, webhooks.DeliveryFilter{}, 3)
	is.NoErr(err)
	is.Equal(ids(log), []string{last.ID, ds[500].ID, ds[499].ID})
	log, err = st.Deliveries(ctx, ws, webhooks.DeliveryFilter{WebhookID: a.ID}, 1000)
	is.NoErr(err)
	is.Equal(len(log), 501)
	log, err = st.Deliveries(ctx, ws, webhooks.DeliveryFilter{Status: webhooks.Succeeded}, 10)
	is.NoErr(err)
	is.Equal(ids(log), []string{last.ID})
	log, err = st.Deliveries(ctx, ws, webhooks.DeliveryFilter{WebhookID: b.ID, Status: webhooks.Pending}, 10)
	is.NoErr(err)
	is.Equal(len(log), 0)
	log, err = st.Deliveries(ctx, apikit.NewID(), webhooks.DeliveryFilter{}, 10)
	is.NoErr(err)
	is.Equal(len(log), 0)
}

// claim: pending deliveries due are leased, the earliest due first and at
// most limit; a leased one is not claimed again before its lease ends;
// one not yet due, or no longer pending, is not claimed; NextDue is the
// earliest pending delivery's time.
func claim(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws := open(t)
	_, found, err := st.NextDue(ctx)
	is.NoErr(err)
	is.True(!found)
	w := webhook(ws, at, "*")
	is.NoErr(st.Insert(ctx, w))
	early, late, later := delivery(w, at), delivery(w, at.Add(time.Minute)), delivery(w, at.Add(time.Hour))
	done := delivery(w, at.Add(-time.Hour))
	done.Status, done.NextAttemptAt = webhooks.Succeeded, nil
	is.NoErr(st.InsertDeliveries(ctx, []webhooks.Delivery{later, late, early, done}))
	next, found, err := st.NextDue(ctx)
	is.NoErr(err)
	is.True(found && next.Equal(at))

	now := at.Add(2 * time.Minute)
	got, err := st.Claim(ctx, now, now.Add(time.Minute), 1)
	is.NoErr(err)
	is.Equal(ids(got), []string{early.ID})
	is.True(got[0].LeaseUntil != nil && got[0].LeaseUntil.Equal(now.Add(time.Minute)))
	got, err = st.Claim(ctx, now, now.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(ids(got), []string{late.ID})
	got, err = st.Claim(ctx, now.Add(30*time.Second), now.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(got), 0) // both leased, the third not due
	got, err = st.Claim(ctx, now.Add(2*time.Minute), now.Add(3*time.Minute), 10)
	is.NoErr(err)
	is.Equal(ids(got), []string{early.ID, late.ID}) // the leases ended
}

// attempts: a success ends its deliveries with the status code and one
// more attempt; a saved attempt reads back; dropping a webhook's pending
// deliveries fails them with the reason and leaves the others.
func attempts(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws := open(t)
	w := webhook(ws, at, "*")
	is.NoErr(st.Insert(ctx, w))
	ok1, ok2, retry, pending := delivery(w, at), delivery(w, at), delivery(w, at), delivery(w, at)
	is.NoErr(st.InsertDeliveries(ctx, []webhooks.Delivery{ok1, ok2, retry, pending}))
	now := at.Add(time.Minute)
	_, err := st.Claim(ctx, now, now.Add(time.Minute), 10)
	is.NoErr(err)

	is.NoErr(st.Succeeded(ctx, []string{ok1.ID, ok2.ID}, 204, now))
	got, err := st.Delivery(ctx, ws, ok2.ID)
	is.NoErr(err)
	is.Equal(got.Status, webhooks.Succeeded)
	is.Equal(got.Attempts, 1)
	is.Equal(*got.LastStatusCode, 204)
	is.True(got.NextAttemptAt == nil && got.LeaseUntil == nil && got.LastError == nil)
	is.True(got.UpdatedAt.Equal(now))

	next, code, why := now.Add(2*time.Minute), 503, "the endpoint answered 503"
	retry.Attempts, retry.NextAttemptAt, retry.LeaseUntil, retry.LastStatusCode, retry.LastError, retry.UpdatedAt = 1, &next, nil, &code, &why, now
	is.NoErr(st.SaveAttempt(ctx, &retry))
	got, err = st.Delivery(ctx, ws, retry.ID)
	is.NoErr(err)
	is.Equal(got.Status, webhooks.Pending)
	is.Equal(got.Attempts, 1)
	is.True(got.NextAttemptAt.Equal(next) && got.LeaseUntil == nil)
	is.Equal(*got.LastStatusCode, 503)
	is.Equal(*got.LastError, why)

	is.NoErr(st.DropPending(ctx, w.ID, "the webhook was deleted", now.Add(time.Hour)))
	for _, id := range []string{retry.ID, pending.ID} {
		got, err = st.Delivery(ctx, ws, id)
		is.NoErr(err)
		is.Equal(got.Status, webhooks.Failed)
		is.Equal(*got.LastError, "the webhook was deleted")
		is.True(got.NextAttemptAt == nil)
		is.True(got.UpdatedAt.Equal(now.Add(time.Hour)))
	}
	got, err = st.Delivery(ctx, ws, ok1.ID)
	is.NoErr(err)
	is.Equal(got.Status, webhooks.Succeeded) // not pending: left alone
}

// failures: failures in a row add up and reset to 0; a webhook is
// switched off once, when it is on and has failed often enough.
func failures(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws := open(t)
	w := webhook(ws, at, "*")
	is.NoErr(st.Insert(ctx, w))
	read := func() webhooks.Webhook {
		all, err := st.ByIDs(ctx, []string{w.ID})
		is.NoErr(err)
		return all[0]
	}
	now := at.Add(time.Minute)
	for range 2 {
		is.NoErr(st.CountFailure(ctx, w.ID, now))
	}
	is.Equal(read().ConsecutiveFailures, 2)
	off, err := st.SwitchOff(ctx, w.ID, 3, now)
	is.NoErr(err)
	is.True(!off) // 2 < 3
	is.NoErr(st.ResetFailures(ctx, w.ID, now))
	is.Equal(read().ConsecutiveFailures, 0)
	for range 3 {
		is.NoErr(st.CountFailure(ctx, w.ID, now))
	}
	off, err = st.SwitchOff(ctx, w.ID, 3, now.Add(time.Hour))
	is.NoErr(err)
	is.True(off)
	got := read()
	is.True(!got.Enabled)
	is.True(got.DisabledAt != nil && got.DisabledAt.Equal(now.Add(time.Hour)))
	off, err = st.SwitchOff(ctx, w.ID, 3, now.Add(2*time.Hour))
	is.NoErr(err)
	is.True(!off) // off already
	subs, err := st.Subscribed(ctx, ws)
	is.NoErr(err)
	is.Equal(len(subs), 0)
}

// purge: deliveries created before the cut that are no longer pending are
// removed; pending ones and newer ones stay, and Pending counts the
// pending ones of every workspace.
func purge(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, ws := open(t)
	w := webhook(ws, at, "*")
	is.NoErr(st.Insert(ctx, w))
	oldDone, oldPending, newDone := delivery(w, at), delivery(w, at), delivery(w, at.Add(48*time.Hour))
	oldDone.Status, newDone.Status = webhooks.Failed, webhooks.Succeeded
	is.NoErr(st.InsertDeliveries(ctx, []webhooks.Delivery{oldDone, oldPending, newDone}))
	n, err := st.Pending(ctx)
	is.NoErr(err)
	is.Equal(n, 1)
	is.NoErr(st.Purge(ctx, at.Add(24*time.Hour)))
	_, err = st.Delivery(ctx, ws, oldDone.ID)
	is.True(db.IsNoRows(err))
	for _, id := range []string{oldPending.ID, newDone.ID} {
		_, err = st.Delivery(ctx, ws, id)
		is.NoErr(err)
	}
	n, err = st.Pending(ctx)
	is.NoErr(err)
	is.Equal(n, 1)
}
