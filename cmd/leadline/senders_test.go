package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestSendersCheck connects a mailbox on the test mail servers and says
// what works; a wrong password and a missing variable say what to fix.
func TestSendersCheck(t *testing.T) {
	smtpAddr, imapAddr, ca := os.Getenv("LEADLINE_TEST_SMTP"), os.Getenv("LEADLINE_TEST_IMAP"), os.Getenv("LEADLINE_TEST_MAIL_CA")
	if smtpAddr == "" || imapAddr == "" {
		t.Skip("no test mail servers: run eval \"$(.ci/mail/start)\" (as .ci/run does) to start Postfix and Dovecot on loopback")
	}
	is := is.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	dsn := filepath.Join(dir, "check.db")
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	addr := "t-" + hex.EncodeToString(b) + "@leadline.test"
	sh, sp, _ := net.SplitHostPort(smtpAddr)
	ih, ip, _ := net.SplitHostPort(imapAddr)
	mailbox := func(name, env string) string {
		return fmt.Sprintf(`      - name: %s
        channel: email
        address: %s
        transport: smtp
        smtp: {host: %s, port: %s, security: starttls, ca_file: %s, username: %s, password_env: %s}
        imap: {host: %s, port: %s, security: starttls, ca_file: %s, username: %s, password_env: %s, sent: Sent}
`, name, addr, sh, sp, ca, addr, env, ih, ip, ca, addr, env)
	}
	file := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(file, []byte(`workspaces:
  - name: acme
    members: [{email: owner@acme.test, role: owner}]
    senders:
`+mailbox("good", "LEADLINE_TEST_CHECK_PW")+mailbox("wrong", "LEADLINE_TEST_CHECK_WRONG")+mailbox("unset", "LEADLINE_TEST_CHECK_UNSET")), 0o600))
	t.Setenv("LEADLINE_TEST_CHECK_PW", "leadline")
	t.Setenv("LEADLINE_TEST_CHECK_WRONG", "not-the-password")
	var out, errOut bytes.Buffer
	is.NoErr(run(ctx, []string{"apply", "--db", dsn, "-f", file}, &out, &errOut))
	is.True(strings.Contains(out.String(), "warning: sender unset needs the environment variable LEADLINE_TEST_CHECK_UNSET"))

	out.Reset()
	is.NoErr(run(ctx, []string{"senders", "check", "--db", dsn, "--workspace", "acme", "--sender", "good", "--send-test", addr}, &out, &errOut))
	got := out.String()
	is.True(strings.Contains(got, "✓ smtp "+smtpAddr+" greeting and STARTTLS"))
	is.True(strings.Contains(got, "✓ smtp "+smtpAddr+" AUTH as "+addr))
	is.True(strings.Contains(got, "✓ imap "+imapAddr+" login as "+addr))
	is.True(strings.Contains(got, "✓ imap sent folder (copies are kept here) Sent"))
	is.True(strings.Contains(got, "✓ test message to "+addr+" sent"))
	is.True(!strings.Contains(got, "✗"))

	out.Reset()
	err := run(ctx, []string{"senders", "check", "--db", dsn, "--workspace", "acme"}, &out, &errOut)
	is.True(errors.Is(err, errCheckFailed))
	got = out.String()
	is.True(strings.Contains(got, "✗ smtp "+smtpAddr+" AUTH as "+addr))
	is.True(strings.Contains(got, "Check the username and the secret in LEADLINE_TEST_CHECK_WRONG"))
	is.True(strings.Contains(got, "set LEADLINE_TEST_CHECK_UNSET in the server's environment and restart"))
	is.True(!strings.Contains(got, "not-the-password")) // no secret is printed

	// A secret typed in (stored sealed) connects the sender whose
	// variable is unset.
	old := stdin
	t.Cleanup(func() { stdin = old })
	stdin = strings.NewReader("leadline\n")
	is.NoErr(run(ctx, []string{"senders", "secret", "set", "--db", dsn, "--workspace", "acme", "--sender", "unset", "--name", "LEADLINE_TEST_CHECK_UNSET"}, &out, &errOut))
	out.Reset()
	is.NoErr(run(ctx, []string{"senders", "check", "--db", dsn, "--workspace", "acme", "--sender", "unset"}, &out, &errOut))
	is.True(strings.Contains(out.String(), "✓ imap "+imapAddr+" login as "+addr))
}

// TestSendersSecretSet stores a sender's secret from standard input,
// sealed under the key file beside the database, and never prints it.
func TestSendersSecretSet(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	dsn := filepath.Join(dir, "secret.db")
	file := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(file, []byte(`workspaces:
  - name: acme
    members: [{email: owner@acme.test, role: owner}]
    senders:
      - name: box
        channel: email
        address: box@acme.test
        transport: smtp
        smtp: {host: 127.0.0.1, port: 1, security: none, username: box, password_env: LEADLINE_TEST_BOX_PW}
        imap: {host: 127.0.0.1, port: 1, security: none, username: box, password_env: LEADLINE_TEST_BOX_PW}
`), 0o600))
	var out, errOut bytes.Buffer
	is.NoErr(run(ctx, []string{"apply", "--db", dsn, "-f", file}, &out, &errOut))
	old := stdin
	t.Cleanup(func() { stdin = old })
	stdin = strings.NewReader("s3cret-typed-in\n")
	out.Reset()
	is.NoErr(run(ctx, []string{"senders", "secret", "set", "--db", dsn, "--workspace", "acme", "--sender", "box", "--name", "LEADLINE_TEST_BOX_PW"}, &out, &errOut))
	is.True(strings.Contains(out.String(), "secret LEADLINE_TEST_BOX_PW stored sealed"))
	stdin = strings.NewReader("x")
	err := run(ctx, []string{"senders", "secret", "set", "--db", dsn, "--workspace", "acme", "--sender", "box", "--name", "NOT_NAMED"}, &out, &errOut)
	is.True(err != nil && strings.Contains(err.Error(), "names no secret"))
	raw, err := os.ReadFile(dsn)
	is.NoErr(err)
	is.True(!bytes.Contains(raw, []byte("s3cret-typed-in"))) // sealed in the file
	is.True(!strings.Contains(out.String()+errOut.String(), "s3cret-typed-in"))
	out.Reset()
	is.NoErr(run(ctx, []string{"senders", "secret", "delete", "--db", dsn, "--workspace", "acme", "--sender", "box", "--name", "LEADLINE_TEST_BOX_PW"}, &out, &errOut))
	is.True(strings.Contains(out.String(), "deleted"))
}
