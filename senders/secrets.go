package senders

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
)

// Secrets keeps the senders' secrets that a manager typed in (the
// console's sender form, `leadline senders secret set`), sealed under the
// server's secret key, by sender and by the name the sender's settings
// give the secret (password_env, token_env, api_key_env,
// webhook_secret_env). It is the platform's Credentials: a stored secret
// first, else the environment variable of that name. A stored secret is
// never shown again: only its name is.
type Secrets struct {
	db    *db.DB
	clock apikit.Clock
	key   secret.Key
	// Next gives the secrets that are not stored (default: the
	// environment).
	Next Credentials
}

// NewSecrets returns the stored secrets of d, sealed under key.
func NewSecrets(d *db.DB, clock apikit.Clock, key secret.Key) *Secrets {
	return &Secrets{db: d, clock: clock, key: key, Next: EnvCredentials{}}
}

// Secret returns the stored secret name of sender s, else Next's.
func (x *Secrets) Secret(ctx context.Context, s *Sender, name string) (string, error) {
	var stored []string
	if err := x.db.IDB(ctx).NewSelect().Table("sender_secrets").Column("secret").Where("sender_id = ? AND name = ?", s.ID, name).
		Scan(ctx, &stored); err != nil {
		return "", err
	}
	if len(stored) > 0 {
		v, err := x.key.OpenString(stored[0], secret.SenderSecrets.AAD(s.ID, name))
		if err != nil {
			return "", fmt.Errorf("%w: sender %s's stored secret %s does not open under this server's key (%v); type it again", ErrCredentialsMissing, s.Name, name, err)
		}
		return v, nil
	}
	return x.Next.Secret(ctx, s, name)
}

// Set stores value as sender s's secret name, sealed. name must be one
// its settings name (Settings.SecretNames).
// Returns E_PAYLOAD_INVALID for another name or an empty value, and
// E_CONFLICT on a server without a secret key.
func (x *Secrets) Set(ctx context.Context, s *Sender, name, value string) error {
	names := s.SecretNames()
	if !slices.Contains(names, name) {
		remedy := "Name the secret in the sender's settings first (password_env, token_env, api_key_env or webhook_secret_env)."
		if len(names) > 0 {
			remedy = "The sender's settings name " + Listing(names) + "."
		}
		return apikit.Invalid(fmt.Sprintf("Sender %q names no secret %q.", s.Name, name), remedy)
	}
	if value == "" {
		return apikit.Invalid("The secret is empty.", "Type the password, token or API key.")
	}
	if x.key.IsZero() {
		return apikit.Conflict("This server has no secret key, so it cannot store a secret sealed.",
			fmt.Sprintf("Set %s on the server and workers (openssl rand -base64 32), or set the environment variable %s where leadline serve and leadline work run.", secret.EnvKey, name))
	}
	sealed, err := x.key.SealString(value, secret.SenderSecrets.AAD(s.ID, name))
	if err != nil {
		return err
	}
	_, err = x.db.IDB(ctx).NewRaw(`INSERT INTO sender_secrets (sender_id, name, secret, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (sender_id, name) DO UPDATE SET secret = excluded.secret, updated_at = excluded.updated_at`,
		s.ID, name, sealed, x.clock.Now()).Exec(ctx)
	return err
}

// Stored returns the names of sender s's stored secrets, in order.
func (x *Secrets) Stored(ctx context.Context, s *Sender) ([]string, error) {
	var names []string
	err := x.db.IDB(ctx).NewSelect().Table("sender_secrets").Column("name").Where("sender_id = ?", s.ID).Order("name").Scan(ctx, &names)
	return names, err
}

// Delete forgets sender s's stored secret name (the environment variable
// is read again); deleting one that is not stored changes nothing.
func (x *Secrets) Delete(ctx context.Context, s *Sender, name string) error {
	_, err := x.db.IDB(ctx).NewDelete().Table("sender_secrets").Where("sender_id = ? AND name = ?", s.ID, name).Exec(ctx)
	return err
}

// Missing are the secrets sender s's settings name that are neither
// stored nor in the environment.
func (x *Secrets) Missing(ctx context.Context, s *Sender) ([]string, error) {
	var out []string
	for _, name := range s.SecretNames() {
		if _, err := x.Secret(ctx, s, name); errors.Is(err, ErrCredentialsMissing) {
			out = append(out, name)
		} else if err != nil {
			return nil, err
		}
	}
	return out, nil
}
