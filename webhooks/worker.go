package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/leadline/leadline/internal/db"
)

// Delivery rules.
const (
	// MaxAttempts is how many times a delivery is tried: at once, then
	// after about 2, 4, 8 and 16 minutes.
	MaxAttempts = 5
	// SwitchOffAfter failed deliveries in a row switch a webhook off.
	SwitchOffAfter = 50
	// Retention is how long the delivery log keeps a delivery.
	Retention = 30 * 24 * time.Hour
)

// RetryAfter is the wait after failed attempt n (1-based): 2, 4, 8, 16
// minutes, before jitter.
func RetryAfter(n int) time.Duration { return time.Duration(1<<n) * time.Minute }

// jitter spreads retries of deliveries that failed together (a receiver
// that was down) by up to a tenth of the wait, the same for the same
// delivery and attempt.
func jitter(id string, n int) time.Duration {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s:%d", id, n)
	return time.Duration(h.Sum32()%1000) * RetryAfter(n) / 10000
}

// Worker sends due deliveries. Several workers (replicas) share the work:
// each claims deliveries with a lease, with SKIP LOCKED on Postgres.
type Worker struct {
	svc    *Service
	client *http.Client
	logger *slog.Logger
	// Batch is how many deliveries one claim takes.
	Batch int
	// Concurrency bounds the requests in flight; PerEndpoint bounds them
	// per webhook, so that a slow receiver holds up only its own.
	Concurrency int
	PerEndpoint int
	// Lease is how long a claim holds a delivery.
	Lease time.Duration

	nextPurge time.Time
	// Observer hears each attempt's result (nil: nothing).
	Observer Observer
}

// Observer hears what a webhook worker does, for metrics; the platform
// gives it one (platform.Metrics). Its methods must be quick.
type Observer interface {
	// Attempt is one delivery attempt: ok when the endpoint answered 2xx;
	// final when a failed delivery will not be tried again.
	Attempt(ok, final bool)
}

// NewWorker returns a worker that sends with client (the guarded client of
// Guard.Client).
func (svc *Service) NewWorker(client *http.Client, logger *slog.Logger) *Worker {
	if logger == nil {
		logger = slog.Default()
	}
	return &Worker{svc: svc, client: client, logger: logger, Batch: 256, Concurrency: 64, PerEndpoint: 8, Lease: time.Minute}
}

// Run ticks every interval until ctx ends.
func (w *Worker) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := w.Tick(ctx); err != nil && ctx.Err() == nil {
			w.logger.Error("webhooks: tick", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick purges the log of deliveries older than 30 days (hourly), then
// sends every due delivery once, and returns how many it sent.
func (w *Worker) Tick(ctx context.Context) (int, error) {
	now := w.svc.clock.Now()
	if !now.Before(w.nextPurge) {
		if err := w.svc.Purge(ctx); err != nil {
			return 0, err
		}
		w.nextPurge = now.Add(time.Hour)
	}
	n := 0
	for {
		batch, err := w.claim(ctx)
		if err != nil {
			return n, err
		}
		if len(batch) == 0 {
			return n, nil
		}
		if err := w.send(ctx, batch); err != nil {
			return n, err
		}
		n += len(batch)
		if len(batch) < w.Batch {
			return n, nil
		}
	}
}

// NextDue returns when the next pending delivery is due, for simulated time.
func (w *Worker) NextDue(ctx context.Context) (time.Time, bool, error) {
	return w.svc.store.NextDue(ctx)
}

// claim leases up to Batch due deliveries.
func (w *Worker) claim(ctx context.Context) ([]Delivery, error) {
	var out []Delivery
	err := w.svc.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, w.svc.clock)
		var err error
		out, err = w.svc.store.Claim(ctx, now, now.Add(w.Lease), w.Batch)
		return err
	})
	return out, err
}

// outcome is one attempt's result.
type outcome struct {
	code int
	err  string
}

// send makes one attempt of each claimed delivery, concurrently within
// the bounds, then records the outcomes in one transaction.
func (w *Worker) send(ctx context.Context, batch []Delivery) error {
	hooks := map[string]*Webhook{}
	var ids []string
	for _, d := range batch {
		if _, ok := hooks[d.WebhookID]; !ok {
			hooks[d.WebhookID] = nil
			ids = append(ids, d.WebhookID)
		}
	}
	ws, err := w.svc.store.ByIDs(ctx, ids)
	if err != nil {
		return err
	}
	// Each webhook's signing secret is opened once per batch; one that does
	// not open fails its deliveries' attempts, not the whole batch.
	secrets := map[string]string{}
	for i := range ws {
		hooks[ws[i].ID] = &ws[i]
		s, err := w.svc.signingSecret(&ws[i])
		if err != nil {
			w.logger.Error("webhooks: cannot open a webhook's signing secret", "webhook_id", ws[i].ID, "error", err)
			continue
		}
		secrets[ws[i].ID] = s
	}
	results := make([]outcome, len(batch))
	all := make(chan struct{}, max(1, w.Concurrency))
	per := map[string]chan struct{}{}
	for _, id := range ids {
		per[id] = make(chan struct{}, max(1, w.PerEndpoint))
	}
	var wg sync.WaitGroup
	for i := range batch {
		d, h := &batch[i], hooks[batch[i].WebhookID]
		if h == nil || h.DeletedAt != nil || !h.Enabled {
			results[i] = outcome{err: "the webhook is switched off or deleted"}
			continue
		}
		key, ok := secrets[h.ID]
		if !ok {
			results[i] = outcome{err: "the webhook's signing secret cannot be opened with this server's secret key"}
			continue
		}
		wg.Add(1)
		all <- struct{}{}
		per[h.ID] <- struct{}{}
		go func() {
			defer wg.Done()
			results[i] = w.attempt(ctx, d, h, key)
			<-per[h.ID]
			<-all
		}()
	}
	wg.Wait()
	err = w.svc.db.InTx(ctx, func(ctx context.Context) error { return w.record(ctx, batch, hooks, results) })
	if err == nil && w.Observer != nil {
		for i := range batch {
			// record counted the attempt: a failure on the last attempt,
			// or for a webhook switched off, is final.
			h := hooks[batch[i].WebhookID]
			final := results[i].err != "" && (batch[i].Status == Failed || h == nil || h.DeletedAt != nil || !h.Enabled)
			w.Observer.Attempt(results[i].err == "", final)
		}
	}
	return err
}

// attempt posts one delivery, signed with the webhook's secret.
func (w *Worker) attempt(ctx context.Context, d *Delivery, h *Webhook, secret string) outcome {
	ts := w.svc.clock.Now()
	body := []byte(d.Payload)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return outcome{err: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "leadline-webhooks/1")
	req.Header.Set(HeaderID, d.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(HeaderSignature, Sign(secret, d.ID, ts, body))
	res, err := w.client.Do(req)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, ErrForbiddenAddress) {
			msg = ErrForbiddenAddress.Error()
		}
		return outcome{err: clip(msg)}
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return outcome{code: res.StatusCode, err: fmt.Sprintf("the endpoint answered %d", res.StatusCode)}
	}
	return outcome{code: res.StatusCode}
}

func clip(s string) string {
	if len(s) > 500 {
		return s[:500]
	}
	return s
}

// record writes the attempts' outcomes: a success ends the delivery and
// resets its webhook's failure count; a failure is retried until the
// fifth attempt, and a failed delivery counts toward switching its webhook
// off after 50 in a row. The counts change in the database (not from what
// this worker read), so that workers on several replicas count together.
func (w *Worker) record(ctx context.Context, batch []Delivery, hooks map[string]*Webhook, results []outcome) error {
	st := w.svc.store
	now := db.Now(ctx, w.svc.clock)
	// Successes, the common case, are written a statement per status code,
	// and reset each webhook's count once.
	succeeded := map[int][]string{}
	reset := map[string]bool{}
	for i := range batch {
		if results[i].err == "" {
			succeeded[results[i].code] = append(succeeded[results[i].code], batch[i].ID)
			reset[batch[i].WebhookID] = true
		}
	}
	for code, ids := range succeeded {
		if err := st.Succeeded(ctx, ids, code, now); err != nil {
			return err
		}
	}
	for id := range reset {
		if err := st.ResetFailures(ctx, id, now); err != nil {
			return err
		}
	}
	for i := range batch {
		d, o, h := &batch[i], results[i], hooks[batch[i].WebhookID]
		if o.err == "" {
			continue
		}
		d.Attempts++
		d.LeaseUntil, d.UpdatedAt = nil, now
		if o.code != 0 {
			code := o.code
			d.LastStatusCode = &code
		}
		final := false
		switch {
		case h == nil || h.DeletedAt != nil || !h.Enabled:
			d.Attempts--
			d.Status, d.NextAttemptAt, d.LastError = Failed, nil, &o.err
		case d.Attempts < MaxAttempts:
			next := now.Add(RetryAfter(d.Attempts) + jitter(d.ID, d.Attempts))
			d.NextAttemptAt, d.LastError = &next, &o.err
		default:
			d.Status, d.NextAttemptAt, d.LastError = Failed, nil, &o.err
			final = true
		}
		if err := st.SaveAttempt(ctx, d); err != nil {
			return err
		}
		if !final {
			continue
		}
		if err := st.CountFailure(ctx, d.WebhookID, now); err != nil {
			return err
		}
		off, err := st.SwitchOff(ctx, d.WebhookID, SwitchOffAfter, now)
		if err != nil {
			return err
		}
		if off {
			h.Enabled = false
			w.logger.Warn("webhooks: switched off after failed deliveries in a row", "webhook_id", d.WebhookID, "failures", SwitchOffAfter)
			if err := st.DropPending(ctx, d.WebhookID, "the webhook was switched off after 50 failed deliveries in a row", now); err != nil {
				return err
			}
		}
	}
	return nil
}

// Purge removes deliveries older than 30 days that are no longer pending.
func (svc *Service) Purge(ctx context.Context) error {
	return svc.store.Purge(ctx, db.Now(ctx, svc.clock).Add(-Retention))
}

// QueueDepth is how many deliveries wait to be sent, on every replica.
func (svc *Service) QueueDepth(ctx context.Context) (int, error) {
	return svc.store.Pending(ctx)
}
