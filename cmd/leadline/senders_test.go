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
}
