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

	"github.com/leadline/leadline/internal/dnstest"
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
	// The domain check asks a DNS server of the test's own.
	t.Setenv("LEADLINE_DNS", goodDomain(t, "leadline.test").Addr)

	out.Reset()
	is.NoErr(run(ctx, []string{"senders", "check", "--db", dsn, "--workspace", "acme", "--sender", "good", "--send-test", addr}, &out, &errOut))
	got := out.String()
	is.True(strings.Contains(got, "✓ smtp "+smtpAddr+" greeting and STARTTLS"))
	is.True(strings.Contains(got, "✓ smtp "+smtpAddr+" AUTH as "+addr))
	is.True(strings.Contains(got, "✓ imap "+imapAddr+" login as "+addr))
	is.True(strings.Contains(got, "✓ imap sent folder (copies are kept here) Sent"))
	is.True(strings.Contains(got, "✓ test message to "+addr+" sent"))
	is.True(strings.Contains(got, "✓ DMARC: p=reject"))
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

// goodDomain is a DNS server of the test's own that serves domain with
// MX, SPF, a 2048-bit DKIM key and DMARC.
func goodDomain(t *testing.T, domain string) *dnstest.Server {
	t.Helper()
	srv := dnstest.Start(t)
	srv.Add(t, domain+". 300 IN MX 10 mx."+domain+".", "mx."+domain+". 300 IN A 192.0.2.25")
	srv.TXT(domain, "v=spf1 ip4:192.0.2.0/24 -all")
	srv.TXT("google._domainkey."+domain, dnstest.DKIMRecord(t, 2048))
	srv.TXT("_dmarc."+domain, "v=DMARC1; p=reject")
	return srv
}

// TestSendersCheckDomain checks an email sender's domain against a DNS
// server of the test's own: each part with what to fix, a failure turns
// the sender's health to a warning, and the domain fixed clears it.
func TestSendersCheckDomain(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	dsn := filepath.Join(dir, "domain.db")
	file := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(file, []byte(`workspaces:
  - name: acme
    members: [{email: owner@acme.test, role: owner}]
    senders:
      - name: box
        channel: email
        address: box@acme.test
        transport: smtp
        smtp: {host: 127.0.0.1, port: 1, security: none, username: box, password_env: LEADLINE_TEST_BOX_PW, dkim_selector: google}
        imap: {host: 127.0.0.1, port: 1, security: none, username: box, password_env: LEADLINE_TEST_BOX_PW}
      - {name: demo, channel: email, address: demo@acme.test}
`), 0o600))
	var out, errOut bytes.Buffer
	is.NoErr(run(ctx, []string{"apply", "--db", dsn, "-f", file}, &out, &errOut))
	srv := goodDomain(t, "acme.test")
	srv.TXT("_dmarc.acme.test", "v=DMARC1; p=none") // two DMARC records: a failure
	out.Reset()
	err := run(ctx, []string{"senders", "check", "--db", dsn, "--workspace", "acme", "--dns", srv.Addr}, &out, &errOut)
	is.True(errors.Is(err, errCheckFailed))
	got := out.String()
	is.True(strings.Contains(got, "  domain acme.test (MX, SPF, DKIM, DMARC):\n  ✓ MX: mx.acme.test (10)\n"))
	is.True(strings.Contains(got, "  ! SPF authorises 127.0.0.1: cannot be told: 127.0.0.1 is 127.0.0.1, a local or private address"))
	is.True(strings.Contains(got, "  ✓ DKIM: google: 2048-bit RSA key\n"))
	is.True(strings.Contains(got, "  ✗ DMARC: 2 DMARC records at _dmarc.acme.test: receivers apply none of them. Keep one DMARC record (RFC 7489 §6.6.3).\n"))
	is.True(strings.Contains(got, "  ! health: warning domain_check_failed"))
	is.Equal(strings.Count(got, "domain acme.test"), 1) // the sandbox sender has no domain to check
	health := func() string {
		d, err := openDB(ctx, dsn)
		is.NoErr(err)
		defer d.Close()
		var h string
		is.NoErr(d.NewSelect().Table("senders").Column("health").Where("name = ?", "box").Scan(ctx, &h))
		return h
	}
	is.Equal(health(), "warning")

	fixed := goodDomain(t, "acme.test")
	out.Reset()
	err = run(ctx, []string{"senders", "check", "--db", dsn, "--workspace", "acme", "--sender", "box", "--dns", fixed.Addr}, &out, &errOut)
	is.True(errors.Is(err, errCheckFailed)) // the mail server is not there
	is.True(!strings.Contains(out.String(), "✗ DMARC"))
	is.Equal(health(), "healthy")
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
