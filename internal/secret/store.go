package secret

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Column is a database column that keeps sealed values.
type Column struct {
	Table string
	Name  string
	// IDs are the columns that identify a row; their values, in this
	// order, are the row's part of the associated data.
	IDs []string
	// Binary marks a BLOB (bytea) column rather than text.
	Binary bool
	// What names the values for people.
	What string
	// Optional columns may keep values in the clear on a server without a
	// key; see Prepare.
	Optional bool
}

// AAD is the associated data of the value in the row identified by ids:
// the column's place and the row's id, so that a sealed value opens only
// where it was written.
func (c Column) AAD(ids ...string) []byte {
	return []byte(c.Table + "." + c.Name + "\x00" + strings.Join(ids, "\x00"))
}

// The columns that keep sealed values.
var (
	// WebhookSecrets are the webhooks' signing secrets, by webhook id.
	WebhookSecrets = Column{Table: "webhooks", Name: "secret", IDs: []string{"id"}, What: "webhook signing secrets"}
	// BookingSecrets are the scheduling providers' signing secrets, by
	// workspace and provider.
	BookingSecrets = Column{Table: "booking_secrets", Name: "secret", IDs: []string{"workspace_id", "provider"},
		What: "scheduling providers' secrets"}
	// SenderSecrets are senders' passwords, tokens and API keys typed in
	// the console (or `leadline senders secret set`), by sender and name.
	SenderSecrets = Column{Table: "sender_secrets", Name: "secret", IDs: []string{"sender_id", "name"}, What: "senders' secrets"}
	// StoredAnswers are the answers kept for Idempotency-Key replays, by
	// API key and Idempotency-Key. A server without a key keeps them in
	// the clear: it cannot create a secret they could carry.
	StoredAnswers = Column{Table: "idempotency", Name: "body", IDs: []string{"key_id", "idem_key"}, Binary: true,
		What: "stored idempotent answers", Optional: true}
	// OAuthAppSecrets are the client secrets of the OAuth apps workspaces
	// registered with Google or Microsoft, by workspace and provider.
	OAuthAppSecrets = Column{Table: "oauth_apps", Name: "secret", IDs: []string{"workspace_id", "provider"}, What: "OAuth apps' client secrets"}
	// OAuthVerifiers are the PKCE code verifiers of the connects in
	// progress, by state.
	OAuthVerifiers = Column{Table: "oauth_states", Name: "verifier", IDs: []string{"id"}, What: "OAuth code verifiers"}
	// OAuthTokens are the refresh tokens of the mailboxes connected with
	// OAuth, by sender.
	OAuthTokens = Column{Table: "oauth_tokens", Name: "refresh_token", IDs: []string{"sender_id"}, What: "OAuth refresh tokens"}
)

// Columns are every column that keeps sealed values: what Prepare and
// Rotate go through. A new kind of secret adds its column here.
var Columns = []Column{WebhookSecrets, BookingSecrets, SenderSecrets, StoredAnswers, OAuthAppSecrets, OAuthVerifiers, OAuthTokens}

// arg is v as the column's type takes it.
func (c Column) arg(v []byte) any {
	if c.Binary {
		return v
	}
	return string(v)
}

// keyIDs returns the ids of the keys that sealed the column's values.
func (c Column) keyIDs(ctx context.Context, idb bun.IDB) ([]string, error) {
	var heads []string
	err := idb.NewRaw("SELECT DISTINCT substr(?, 1, ?) FROM ? WHERE substr(?, 1, ?) = ?",
		bun.Ident(c.Name), len(Prefix)+idLen+1, bun.Ident(c.Table), bun.Ident(c.Name), len(Prefix), c.arg([]byte(Prefix))).Scan(ctx, &heads)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, h := range heads {
		if id, ok := KeyID([]byte(h)); ok {
			ids = append(ids, id)
		} else {
			ids = append(ids, "(unreadable)")
		}
	}
	return ids, nil
}

// plainCount counts the column's values kept in the clear.
func (c Column) plainCount(ctx context.Context, idb bun.IDB) (int, error) {
	var n []int
	err := idb.NewRaw("SELECT count(*) FROM ? WHERE ? IS NOT NULL AND substr(?, 1, ?) <> ?",
		bun.Ident(c.Table), bun.Ident(c.Name), bun.Ident(c.Name), len(Prefix), c.arg([]byte(Prefix))).Scan(ctx, &n)
	if err != nil || len(n) == 0 {
		return 0, err
	}
	return n[0], nil
}

// reseal replaces each value of the column that fn changes; only values
// in the clear when plainOnly. Each write is conditional on the value read,
// so that a process sealing the same value at the same moment is not
// overwritten with a different sealing of it. It returns how many values it
// wrote.
func (c Column) reseal(ctx context.Context, idb bun.IDB, plainOnly bool, fn func(v, aad []byte) ([]byte, error)) (int, error) {
	q := "SELECT " + strings.Repeat("?, ", len(c.IDs)) + "? FROM ? WHERE ? IS NOT NULL"
	args := make([]any, 0, len(c.IDs)+6)
	for _, id := range c.IDs {
		args = append(args, bun.Ident(id))
	}
	args = append(args, bun.Ident(c.Name), bun.Ident(c.Table), bun.Ident(c.Name))
	if plainOnly {
		q += " AND substr(?, 1, ?) <> ?"
		args = append(args, bun.Ident(c.Name), len(Prefix), c.arg([]byte(Prefix)))
	}
	type row struct {
		ids []string
		v   []byte
	}
	var rows []row
	err := func() error {
		rs, err := idb.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			r := row{ids: make([]string, len(c.IDs))}
			dest := make([]any, 0, len(c.IDs)+1)
			for i := range r.ids {
				dest = append(dest, &r.ids[i])
			}
			if err := rs.Scan(append(dest, &r.v)...); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	}()
	if err != nil {
		return 0, err
	}
	where := make([]string, len(c.IDs))
	for i := range c.IDs {
		where[i] = "? = ?"
	}
	n := 0
	for _, r := range rows {
		out, err := fn(r.v, c.AAD(r.ids...))
		if err != nil {
			return n, fmt.Errorf("%s of %s %s: %w", c.Name, c.Table, strings.Join(r.ids, "/"), err)
		}
		args := []any{bun.Ident(c.Table), bun.Ident(c.Name), c.arg(out)}
		for i, id := range c.IDs {
			args = append(args, bun.Ident(id), r.ids[i])
		}
		args = append(args, bun.Ident(c.Name), c.arg(r.v))
		changed, err := db.Changed(idb.NewRaw("UPDATE ? SET ? = ? WHERE "+strings.Join(where, " AND ")+" AND ? = ?", args...).Exec(ctx))
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	return n, nil
}

// Prepare gets the database's secrets ready for a server with key k, after
// the migrations: it refuses a key other than the one the database's
// secrets are sealed under, and, without a key, a database that keeps
// secrets; then it seals the values kept in the clear (written before
// sealing existed) in one transaction, and returns how many it sealed.
// Running it again seals nothing more.
func Prepare(ctx context.Context, d *db.DB, k Key) (int, error) {
	if err := sealedUnder(ctx, d, k); err != nil {
		return 0, err
	}
	if k.IsZero() {
		var what []string
		total := 0
		for _, c := range Columns {
			if c.Optional {
				continue
			}
			n, err := c.plainCount(ctx, d.DB)
			if err != nil {
				return 0, err
			}
			if n > 0 {
				total += n
				what = append(what, c.What)
			}
		}
		if total > 0 {
			return 0, &apikit.Error{Code: apikit.EConflict,
				Message: fmt.Sprintf("This database keeps %d secrets (%s), and %s is not set: a database other than a SQLite file needs it to keep them sealed.",
					total, strings.Join(what, ", "), EnvKey),
				Remedy: fmt.Sprintf("Set %s on every server and worker to 32 random bytes in base64 (openssl rand -base64 32), keep a copy apart from the database's backups, and start again: the secrets are sealed under it then.", EnvKey)}
		}
		return 0, nil
	}
	total := 0
	err := d.InTx(ctx, func(ctx context.Context) error {
		total = 0
		for _, c := range Columns {
			n, err := c.reseal(ctx, d.IDB(ctx), true, k.Seal)
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}

// sealedUnder refuses a database that keeps values sealed under a key
// other than k (or under any key, when k is none).
func sealedUnder(ctx context.Context, d *db.DB, k Key) error {
	var others []string
	for _, c := range Columns {
		ids, err := c.keyIDs(ctx, d.IDB(ctx))
		if err != nil {
			return err
		}
		for _, id := range ids {
			if id != k.ID() && !slices.Contains(others, id) {
				others = append(others, id)
			}
		}
	}
	if len(others) > 0 {
		return wrongKey(d, k, others)
	}
	return nil
}

// wrongKey is the error of a server whose key (or lack of one) does not
// open the database's secrets.
func wrongKey(d *db.DB, k Key, others []string) error {
	where := EnvKey
	if d.Path != "" {
		where += ", or the key file " + FileFor(d.Path) + " beside the database"
	}
	msg := fmt.Sprintf("This database keeps secrets sealed under the secret key %s, and this server has ", strings.Join(others, " and "))
	if k.IsZero() {
		msg += "no key."
	} else {
		msg += "the key " + k.ID() + "."
	}
	return &apikit.Error{Code: apikit.EConflict, Message: msg,
		Remedy: "Use the key they were sealed under (" + where + "); `leadline secrets rotate` changes keys."}
}

// Rotate re-seals every sealed value under newKey, in one transaction, and
// returns how many values it wrote: values sealed under old are opened
// with it, values still in the clear are sealed. Nothing changes when one
// value does not open. Every server and worker must be stopped while it
// runs and start again with newKey.
func Rotate(ctx context.Context, d *db.DB, old, newKey Key) (int, error) {
	if newKey.IsZero() {
		return 0, ErrNoKey
	}
	total := 0
	err := d.InTx(ctx, func(ctx context.Context) error {
		if err := sealedUnder(ctx, d, old); err != nil {
			return err
		}
		total = 0
		for _, c := range Columns {
			n, err := c.reseal(ctx, d.IDB(ctx), false, func(v, aad []byte) ([]byte, error) {
				if IsSealed(v) {
					plain, err := old.Open(v, aad)
					if err != nil {
						return nil, err
					}
					v = plain
				}
				return newKey.Seal(v, aad)
			})
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}
