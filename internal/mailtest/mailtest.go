// Package mailtest gives tests mail servers: the real Postfix and Dovecot
// that .ci/mail/start runs on loopback (Servers, Mailbox, Deliver), and
// in-process servers that fail on purpose (IMAP, SMTP, Down) to test how
// leadline meets a server that refuses, drops or changes.
//
// Nothing here reaches beyond loopback.
package mailtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/leadline/leadline/senders"
)

// The variables that name the test servers (.ci/mail/start prints them).
const (
	EnvSMTP = "LEADLINE_TEST_SMTP" // host:port of the submission service (AUTH required)
	EnvIMAP = "LEADLINE_TEST_IMAP" // host:port of IMAP
	EnvCA   = "LEADLINE_TEST_MAIL_CA"
)

// Password is the password of every mailbox of the test servers.
const Password = "leadline"

// Domain is the test domain fresh mailboxes are made in; example.test,
// globex.test and acme.test are delivered too, and mail to bounce.test
// comes back as a delivery status notification.
const Domain = "leadline.test"

// HostPort is a server's address.
type HostPort struct {
	Host string
	Port int
}

// Addr is host:port.
func (h HostPort) Addr() string { return net.JoinHostPort(h.Host, strconv.Itoa(h.Port)) }

// Real are the test mail servers: SMTP (submission) and IMAP, and the CA
// file that their STARTTLS certificate is signed by ("" if unknown).
type Real struct {
	SMTP, IMAP HostPort
	CAFile     string
}

// Servers returns the test mail servers named by LEADLINE_TEST_SMTP and
// LEADLINE_TEST_IMAP, and skips the test when they are not set.
func Servers(t testing.TB) Real {
	t.Helper()
	smtpAddr, imapAddr := os.Getenv(EnvSMTP), os.Getenv(EnvIMAP)
	if smtpAddr == "" || imapAddr == "" {
		t.Skip(EnvSMTP + " and " + EnvIMAP + " are not set: start the test mail servers with\n" +
			"  eval \"$(sudo .ci/mail/start)\"\n(Postfix and Dovecot on loopback; .ci/run does this itself)")
	}
	return Real{SMTP: hostPort(t, EnvSMTP, smtpAddr), IMAP: hostPort(t, EnvIMAP, imapAddr), CAFile: os.Getenv(EnvCA)}
}

func hostPort(t testing.TB, name, v string) HostPort {
	t.Helper()
	h, p, err := net.SplitHostPort(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("%s=%q: bad port", name, v)
	}
	return HostPort{Host: h, Port: port}
}

// Box is a mailbox of its own on the test servers.
type Box struct {
	Address  string
	Password string
	Servers  Real
}

// Mailbox makes a fresh address on the test servers (a mailbox no other
// test uses) and empties its folders over IMAP when the test ends. It
// skips like Servers.
func Mailbox(t testing.TB) Box {
	t.Helper()
	b := Box{Address: "t-" + random() + "@" + Domain, Password: Password, Servers: Servers(t)}
	t.Cleanup(func() {
		if err := b.empty(); err != nil {
			t.Errorf("mailtest: empty %s: %v", b.Address, err)
		}
	})
	return b
}

// Deliver sends raw from from to the recipients over the test servers'
// submission port (signed in as from, or as a test address for a from
// outside the test domains) and waits until the box holds want messages
// in its inbox (0: does not wait).
func (b Box) Deliver(t testing.TB, from string, to []string, raw []byte, want int) {
	t.Helper()
	if err := Send(b.Servers.SMTP, from, to, raw); err != nil {
		t.Fatalf("mailtest: send to %v: %v", to, err)
	}
	if want > 0 {
		b.Wait(t, want)
	}
}

// Send submits raw over the submission service at s, signed in with the
// test password, from from (the envelope sender; "" for none) to to.
func Send(s HostPort, from string, to []string, raw []byte) error {
	c, err := smtp.Dial(s.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	user := from
	if user == "" {
		user = "mailtest@" + Domain
	}
	if err := c.Auth(sasl.NewPlainClient("", user, Password)); err != nil {
		return err
	}
	if err := c.SendMail(from, to, bytes.NewReader(raw)); err != nil {
		return err
	}
	return c.Quit()
}

// Wait waits until the box's inbox holds at least n messages (delivery
// through Postfix to Dovecot takes a moment), at most 20 seconds.
func (b Box) Wait(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := b.count()
		if err != nil {
			t.Fatalf("mailtest: %s: %v", b.Address, err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailtest: %s holds %d messages after 20s, want %d", b.Address, got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Messages returns the raw messages of the box's folder, oldest first.
func (b Box) Messages(t testing.TB, folder string) [][]byte {
	t.Helper()
	var out [][]byte
	err := b.session(func(c *imapclient.Client) error {
		sel, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
		if err != nil || sel.NumMessages == 0 {
			return err
		}
		var all imap.SeqSet
		all.AddRange(1, 0)
		msgs, err := c.Fetch(all, &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{{Peek: true}}}).Collect()
		for _, m := range msgs {
			for _, body := range m.BodySection {
				out = append(out, body.Bytes)
			}
		}
		return err
	})
	if err != nil {
		t.Fatalf("mailtest: read %s of %s: %v", folder, b.Address, err)
	}
	return out
}

func (b Box) count() (int, error) {
	var n int
	err := b.session(func(c *imapclient.Client) error {
		st, err := c.Status("INBOX", &imap.StatusOptions{NumMessages: true}).Wait()
		if err == nil && st.NumMessages != nil {
			n = int(*st.NumMessages)
		}
		return err
	})
	return n, err
}

// empty deletes every message of every folder of the box.
func (b Box) empty() error {
	return b.session(func(c *imapclient.Client) error {
		folders, err := c.List("", "*", nil).Collect()
		if err != nil {
			return err
		}
		for _, f := range folders {
			sel, err := c.Select(f.Mailbox, nil).Wait()
			if err != nil {
				continue // \Noselect
			}
			if sel.NumMessages == 0 {
				continue
			}
			var all imap.SeqSet
			all.AddRange(1, 0)
			if err := c.Store(all, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
				return err
			}
			if err := c.Expunge().Close(); err != nil {
				return err
			}
		}
		return nil
	})
}

// session runs fn signed in to the box over IMAP.
func (b Box) session(fn func(c *imapclient.Client) error) error {
	c, err := imapclient.DialInsecure(b.Servers.IMAP.Addr(), nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Login(b.Address, b.Password).Wait(); err != nil {
		return err
	}
	if err := fn(c); err != nil {
		return err
	}
	return c.Logout().Wait()
}

// Secrets are a sender's secrets by name, for tests: the credentials a
// transport connects with, without the process's environment.
type Secrets map[string]string

// Secret returns the secret name, or an error wrapping
// senders.ErrCredentialsMissing.
func (s Secrets) Secret(_ context.Context, sn *senders.Sender, name string) (string, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%w: sender %s needs %s", senders.ErrCredentialsMissing, sn.Name, name)
}

// Down returns the address of a server that is down: a loopback port that
// nothing listens on (it was just closed).
func Down(t testing.TB) HostPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().(*net.TCPAddr)
	ln.Close()
	return HostPort{Host: "127.0.0.1", Port: a.Port}
}

func random() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Append puts raw messages straight into a folder of the box over IMAP
// (no SMTP): many messages at once, for benchmarks.
func (b Box) Append(t testing.TB, folder string, raws [][]byte) {
	t.Helper()
	err := b.session(func(c *imapclient.Client) error {
		for _, raw := range raws {
			cmd := c.Append(folder, int64(len(raw)), nil)
			if _, err := cmd.Write(raw); err != nil {
				return err
			}
			if err := cmd.Close(); err != nil {
				return err
			}
			if _, err := cmd.Wait(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("mailtest: append to %s of %s: %v", folder, b.Address, err)
	}
}
