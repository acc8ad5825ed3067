package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
)

const bookingsYAML = `workspaces:
  - name: acme
    plan: pro
    members:
      - {email: owner@acme.test, role: owner}
    bookings: {calcom_secret: cal-plain-secret}
`

// withDB runs fn on the database at dsn, as another process would.
func withDB(t *testing.T, dsn string, fn func(ctx context.Context, d *db.DB) error) {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := fn(ctx, d); err != nil {
		t.Fatal(err)
	}
}

// storedBooking returns the calcom secret as the database holds it, and
// the workspace's id.
func storedBooking(t *testing.T, dsn string) (sealed, workspaceID string) {
	t.Helper()
	withDB(t, dsn, func(ctx context.Context, d *db.DB) error {
		return d.NewRaw("SELECT secret, workspace_id FROM booking_secrets WHERE provider = 'calcom'").Scan(ctx, &sealed, &workspaceID)
	})
	return sealed, workspaceID
}

// addPlainWebhook writes a webhook with its secret in the clear, as
// leadline did before sealing, to the (only) workspace.
func addPlainWebhook(t *testing.T, dsn string) {
	t.Helper()
	withDB(t, dsn, func(ctx context.Context, d *db.DB) error {
		now := time.Now()
		_, err := d.NewRaw("INSERT INTO webhooks (id, workspace_id, url, events, secret, created_at, updated_at) SELECT ?, id, 'https://example.test/h', '[\"*\"]', 'whsec_legacyplain', ?, ? FROM workspaces",
			"0193a000-0000-7000-8000-00000000abcd", now, now).Exec(ctx)
		return err
	})
}

// TestSecretKeyFileAndRotate: on a SQLite file, the first command that
// needs the key creates the key file (private, logged once without the
// key); secrets are stored sealed under it, plaintext rows from before are
// sealed at start-up, and `secrets rotate` re-seals everything under a new
// key that the file then holds.
func TestSecretKeyFileAndRotate(t *testing.T) {
	t.Setenv(secret.EnvKey, "")
	t.Setenv(secret.EnvNewKey, "")
	is := is.New(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "l.db")
	keyFile := dbPath + ".key"
	file := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(file, []byte(bookingsYAML), 0o600))

	out, err := runCmd("apply", "--db", dbPath, "-f", file)
	is.NoErr(err)
	is.True(strings.Contains(out, "created the secret key file"))
	is.True(strings.Contains(out, "workspace acme: calcom booking secret set"))
	info, err := os.Stat(keyFile)
	is.NoErr(err)
	if runtime.GOOS != "windows" {
		is.Equal(info.Mode().Perm(), os.FileMode(0o600))
	}
	encoded, err := os.ReadFile(keyFile)
	is.NoErr(err)
	is.True(!strings.Contains(out, strings.TrimSpace(string(encoded)))) // never logged
	k, err := secret.ReadFile(keyFile)
	is.NoErr(err)

	stored, wsID := storedBooking(t, dbPath)
	is.True(!strings.Contains(stored, "cal-plain-secret"))
	plain, err := k.OpenString(stored, secret.BookingSecrets.AAD(wsID, "calcom"))
	is.NoErr(err)
	is.Equal(plain, "cal-plain-secret")

	// Again: the file is read, not created, and nothing changes.
	out, err = runCmd("apply", "--db", dbPath, "-f", file)
	is.NoErr(err)
	is.Equal(out, "no changes\n")

	// A secret kept in the clear by an older leadline is sealed at start-up.
	addPlainWebhook(t, dbPath)
	out, err = runCmd("apply", "--db", dbPath, "-f", file)
	is.NoErr(err)
	is.True(strings.Contains(out, "sealed secrets that were kept in the clear") && strings.Contains(out, "count=1"))
	out, err = runCmd("apply", "--db", dbPath, "-f", file)
	is.NoErr(err)
	is.Equal(out, "no changes\n")

	// Rotate to a new random key: the file holds it, it is not printed.
	out, err = runCmd("secrets", "rotate", "--db", dbPath)
	is.NoErr(err)
	is.True(strings.Contains(out, "Re-sealed 2 secrets under the key "))
	next, err := secret.ReadFile(keyFile)
	is.NoErr(err)
	is.True(!next.Equal(k))
	is.True(strings.Contains(out, next.ID()))
	encoded, err = os.ReadFile(keyFile)
	is.NoErr(err)
	is.True(!strings.Contains(out, strings.TrimSpace(string(encoded))))
	_, err = os.Stat(keyFile + ".new")
	is.True(os.IsNotExist(err))
	stored, _ = storedBooking(t, dbPath)
	plain, err = next.OpenString(stored, secret.BookingSecrets.AAD(wsID, "calcom"))
	is.NoErr(err)
	is.Equal(plain, "cal-plain-secret")
	_, err = k.OpenString(stored, secret.BookingSecrets.AAD(wsID, "calcom"))
	is.True(err != nil)

	// Rotate to a given key.
	given, givenEnc, err := secret.Generate()
	is.NoErr(err)
	_, err = runCmd("secrets", "rotate", "--db", dbPath, "--new-key", givenEnc)
	is.NoErr(err)
	fromFile, err := secret.ReadFile(keyFile)
	is.NoErr(err)
	is.True(fromFile.Equal(given))
	_, err = runCmd("secrets", "rotate", "--db", dbPath, "--new-key", givenEnc)
	is.True(err != nil && strings.Contains(describe(err), "is the current key"))
	_, err = runCmd("secrets", "rotate", "--db", dbPath, "--new-key", "short")
	is.True(err != nil && strings.Contains(err.Error(), "32 bytes"))

	// A wrong key (the variable wins over the file) is refused, naming the
	// key the secrets are under; nothing changes.
	_, wrongEnc, err := secret.Generate()
	is.NoErr(err)
	t.Setenv(secret.EnvKey, wrongEnc)
	_, err = runCmd("apply", "--db", dbPath, "-f", file)
	is.True(err != nil && strings.Contains(describe(err), given.ID()) && strings.Contains(describe(err), keyFile))
	_, err = runCmd("secrets", "rotate", "--db", dbPath)
	is.True(err != nil && strings.Contains(describe(err), given.ID()))

	// With the variable, rotation prints a new random key once and leaves
	// the file alone; the server then starts with that key only.
	t.Setenv(secret.EnvKey, givenEnc)
	out, err = runCmd("secrets", "rotate", "--db", dbPath)
	is.NoErr(err)
	is.True(strings.Contains(out, "Set "+secret.EnvKey+" to it"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	printed, err := secret.Parse(lines[len(lines)-1])
	is.NoErr(err)
	fromFile, err = secret.ReadFile(keyFile)
	is.NoErr(err)
	is.True(fromFile.Equal(given))
	_, err = runCmd("apply", "--db", dbPath, "-f", file)
	is.True(err != nil && strings.Contains(describe(err), printed.ID()))
	t.Setenv(secret.EnvKey, lines[len(lines)-1])
	out, err = runCmd("apply", "--db", dbPath, "-f", file)
	is.NoErr(err)
	is.Equal(out, "no changes\n")

	out, err = runCmd("secrets", "--help")
	is.NoErr(err)
	is.True(strings.Contains(out, "rotate"))
	out, err = runCmd("secrets", "rotate", "--help")
	is.NoErr(err)
	is.True(strings.Contains(out, "-new-key"))
}

// TestSecretKeyOnPostgres: without LEADLINE_SECRET_KEY, a Postgres
// database that keeps no secret starts (booking secrets are refused with
// the remedy), one that keeps secrets does not; with the variable, its
// plaintext secrets are sealed at start-up.
func TestSecretKeyOnPostgres(t *testing.T) {
	t.Setenv(secret.EnvKey, "")
	is := is.New(t)
	dsn := dbtest.NewDSN(t, db.Postgres)
	dir := t.TempDir()
	plainSetup := filepath.Join(dir, "plain.yaml")
	is.NoErr(os.WriteFile(plainSetup, []byte(strings.Replace(bookingsYAML, "    bookings: {calcom_secret: cal-plain-secret}\n", "", 1)), 0o600))
	withBookings := filepath.Join(dir, "bookings.yaml")
	is.NoErr(os.WriteFile(withBookings, []byte(bookingsYAML), 0o600))

	out, err := runCmd("apply", "--db", dsn, "-f", plainSetup)
	is.NoErr(err)
	is.True(strings.Contains(out, "no secret key"))
	_, err = runCmd("apply", "--db", dsn, "-f", withBookings)
	is.True(err != nil)
	is.True(strings.Contains(describe(err), secret.EnvKey) && strings.Contains(describe(err), "openssl rand -base64 32"))

	// Secrets kept in the clear (an older leadline): no start without the key.
	addPlainWebhook(t, dsn)
	for _, args := range [][]string{{"serve", "--addr", "127.0.0.1:0"}, {"work"}, {"apply", "-f", plainSetup}} {
		_, err = runCmd(append(args, "--db", dsn)...)
		is.True(err != nil)
		msg := describe(err)
		is.True(strings.Contains(msg, "1 secrets (webhook signing secrets)") && strings.Contains(msg, secret.EnvKey+" is not set"))
		is.True(strings.Contains(msg, "openssl rand -base64 32"))
	}

	k, enc, err := secret.Generate()
	is.NoErr(err)
	t.Setenv(secret.EnvKey, enc)
	out, err = runCmd("apply", "--db", dsn, "-f", withBookings)
	is.NoErr(err)
	is.True(strings.Contains(out, "sealed secrets that were kept in the clear") && strings.Contains(out, "calcom booking secret set"))
	stored, id := storedBooking(t, dsn)
	plain, err := k.OpenString(stored, secret.BookingSecrets.AAD(id, "calcom"))
	is.NoErr(err)
	is.Equal(plain, "cal-plain-secret")

	// Once sealed, starting without the key names the key they need.
	t.Setenv(secret.EnvKey, "")
	_, err = runCmd("apply", "--db", dsn, "-f", plainSetup)
	is.True(err != nil && strings.Contains(describe(err), k.ID()))
}
