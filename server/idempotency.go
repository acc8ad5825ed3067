package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
)

const (
	// idempotencyTTL is how long an answer is kept for replay.
	idempotencyTTL = 24 * time.Hour
	// idempotencyLease is how long a running request holds its key
	// without renewing it. The request renews it every heartbeatEvery
	// while it runs, so a long request keeps its key, and a request whose
	// process died stops blocking retries within the lease.
	idempotencyLease = 30 * time.Second
	// heartbeatEvery is how often a running request renews its lease.
	heartbeatEvery = 10 * time.Second
	// maxIdempotencyKey bounds the header's length.
	maxIdempotencyKey = 255
)

// Idempotency record states.
const (
	idemRunning = "running"
	idemDone    = "done"
)

type idemRecord struct {
	bun.BaseModel `bun:"table:idempotency,alias:idem"`

	KeyID       string            `bun:"key_id,pk"`
	IdemKey     string            `bun:"idem_key,pk"`
	Fingerprint string            `bun:"fingerprint"`
	State       string            `bun:"state"`
	Status      int               `bun:"status"`
	Headers     map[string]string `bun:"headers,type:jsonb"`
	Body        []byte            `bun:"body"`
	LockedUntil time.Time         `bun:"locked_until"`
	ExpiresAt   time.Time         `bun:"expires_at"`
	CreatedAt   time.Time         `bun:"created_at"`
}

// idempotency stores answers to writes sent with an Idempotency-Key, per
// API key, in the database so that every replica sees them. An answer can
// carry a secret (a new webhook's signing secret), so every stored answer
// is sealed under the server's key, with the API key and Idempotency-Key
// as associated data; a replay answers it in full. A server without a key
// cannot create such secrets and stores answers as they are.
type idempotency struct {
	db    *db.DB
	clock apikit.Clock
	key   secret.Key
	// ticks starts the heartbeat of one running request: a channel that
	// ticks and a stop function. Tests drive it by hand.
	ticks func() (<-chan time.Time, func())
	// renewed, when set, hears of every renewal (tests).
	renewed chan struct{}
}

func newIdempotency(d *db.DB, clock apikit.Clock, key secret.Key) *idempotency {
	return &idempotency{db: d, clock: clock, key: key, ticks: func() (<-chan time.Time, func()) {
		t := time.NewTicker(heartbeatEvery)
		return t.C, t.Stop
	}}
}

// hold renews the lease of a running request until the returned function
// is called; that function waits for the last renewal to finish.
func (s *idempotency) hold(ctx context.Context, keyID, idemKey string, logger interface{ Error(string, ...any) }) func() {
	tick, stop := s.ticks()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-tick:
				if err := s.renew(ctx, keyID, idemKey); err != nil {
					logger.Error("renew idempotency lease", "err", err)
				}
				if s.renewed != nil {
					s.renewed <- struct{}{}
				}
			}
		}
	}()
	return func() {
		stop()
		close(done)
		<-finished
	}
}

// renew extends a running request's lease from now.
func (s *idempotency) renew(ctx context.Context, keyID, idemKey string) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		_, err := s.db.IDB(ctx).NewUpdate().Model((*idemRecord)(nil)).
			Set("locked_until = ?", s.clock.Now().Add(idempotencyLease)).
			Where("key_id = ? AND idem_key = ? AND state = ?", keyID, idemKey, idemRunning).Exec(ctx)
		return err
	})
}

// fingerprint identifies a request: method, path with query, and the body
// (compacted when it is JSON, so whitespace does not make a new request).
func fingerprint(method, path string, body []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, body) != nil {
		buf.Reset()
		buf.Write(body)
	}
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(buf.Bytes())
	return hex.EncodeToString(h.Sum(nil))
}

// lookup returns the live record for (keyID, idemKey), or nil. A record
// still running past its lease (its process died) is not live: the retry
// takes it over in reserve.
func (s *idempotency) lookup(ctx context.Context, keyID, idemKey string) (*idemRecord, error) {
	r := new(idemRecord)
	now := s.clock.Now()
	err := s.db.NewSelect().Model(r).
		Where("key_id = ? AND idem_key = ? AND expires_at > ?", keyID, idemKey, now).
		Where("(state = ? OR locked_until > ?)", idemDone, now).Scan(ctx)
	if db.IsNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if secret.IsSealed(r.Body) {
		if r.Body, err = s.key.Open(r.Body, secret.StoredAnswers.AAD(keyID, idemKey)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// reserve marks (keyID, idemKey) as running for this request. It reports
// false when another live record holds the key: exactly one of N
// concurrent identical requests gets true.
func (s *idempotency) reserve(ctx context.Context, keyID, idemKey, fp string) (bool, error) {
	now := s.clock.Now()
	r := &idemRecord{KeyID: keyID, IdemKey: idemKey, Fingerprint: fp, State: idemRunning, Headers: map[string]string{},
		LockedUntil: now.Add(idempotencyLease), ExpiresAt: now.Add(idempotencyTTL), CreatedAt: now}
	var n int64
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		res, err := s.db.IDB(ctx).NewInsert().Model(r).
			On("CONFLICT (key_id, idem_key) DO UPDATE").
			Set("fingerprint = EXCLUDED.fingerprint, state = EXCLUDED.state, status = 0, headers = EXCLUDED.headers, body = NULL").
			Set("locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at").
			Where("idem.expires_at <= ? OR (idem.state = ? AND idem.locked_until <= ?)", now, idemRunning, now).
			Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, err
}

// complete stores the answer to replay, sealed when the server has a key.
func (s *idempotency) complete(ctx context.Context, keyID, idemKey string, status int, headers map[string]string, body []byte) error {
	if !s.key.IsZero() {
		var err error
		if body, err = s.key.Seal(body, secret.StoredAnswers.AAD(keyID, idemKey)); err != nil {
			return err
		}
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		_, err := s.db.IDB(ctx).NewUpdate().Model((*idemRecord)(nil)).
			Set("state = ?", idemDone).Set("status = ?", status).Set("headers = ?", headers).Set("body = ?", body).
			Where("key_id = ? AND idem_key = ?", keyID, idemKey).Exec(ctx)
		return err
	})
}

// release forgets a running request whose answer is not kept (a 5xx), so a
// retry with the same key runs again.
func (s *idempotency) release(ctx context.Context, keyID, idemKey string) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		_, err := s.db.IDB(ctx).NewDelete().Model((*idemRecord)(nil)).
			Where("key_id = ? AND idem_key = ? AND state = ?", keyID, idemKey, idemRunning).Exec(ctx)
		return err
	})
}

// sweep deletes expired records.
func (s *idempotency) sweep(ctx context.Context) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		_, err := s.db.IDB(ctx).NewDelete().Model((*idemRecord)(nil)).Where("expires_at <= ?", s.clock.Now()).Exec(ctx)
		return err
	})
}
