package mailtest_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/mailtest"
)

func msg(from, to, subject string) []byte {
	return []byte("From: " + from + "\r\nTo: " + to + "\r\nSubject: " + subject + "\r\nMessage-ID: <" + subject + "@leadline.test>\r\n\r\nHello.\r\n")
}

// TestRealServers sends through Postfix and reads over Dovecot: each
// mailbox is its own, a wrong password is refused, mail outside the test
// domains is not taken, and mail to bounce.test comes back as a DSN.
func TestRealServers(t *testing.T) {
	is := is.New(t)
	a, b := mailtest.Mailbox(t), mailtest.Mailbox(t)
	a.Deliver(t, b.Address, []string{a.Address}, msg(b.Address, a.Address, "one"), 1)
	got := a.Messages(t, "INBOX")
	is.Equal(len(got), 1)
	is.True(strings.Contains(string(got[0]), "Subject: one"))
	is.Equal(len(b.Messages(t, "INBOX")), 0) // b's own mailbox is untouched
	is.Equal(len(b.Messages(t, "Sent")), 0)  // Sent exists from the start

	// A wrong password is refused on submission and on IMAP.
	c, err := smtp.Dial(a.Servers.SMTP.Addr())
	is.NoErr(err)
	defer c.Close()
	err = c.Auth(sasl.NewPlainClient("", a.Address, "wrong"))
	var se *smtp.SMTPError
	is.True(errors.As(err, &se))
	is.Equal(se.Code, 535)
	ic, err := imapclient.DialInsecure(a.Servers.IMAP.Addr(), nil)
	is.NoErr(err)
	defer ic.Close()
	is.True(ic.Login(a.Address, "wrong").Wait() != nil)

	// Nothing leaves: an outside address is refused at once.
	err = mailtest.Send(a.Servers.SMTP, a.Address, []string{"someone@outside.invalid"}, msg(a.Address, "someone@outside.invalid", "out"))
	is.True(err != nil)

	// bounce.test bounces: Postfix returns a delivery status notification.
	a.Deliver(t, a.Address, []string{"nobody@bounce.test"}, msg(a.Address, "nobody@bounce.test", "dead"), 2)
	got = a.Messages(t, "INBOX")
	is.True(strings.Contains(string(got[1]), "report-type=delivery-status"))
	is.True(strings.Contains(string(got[1]), "Status: 5.1.1"))
}

func TestFaultIMAP(t *testing.T) {
	is := is.New(t)
	s := mailtest.NewIMAP(t, "u@leadline.test", "pw")
	s.Deliver(t, msg("x@acme.test", "u@leadline.test", "one"))
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	is.NoErr(err)
	defer c.Close()
	is.True(c.Login("u@leadline.test", "wrong").Wait() != nil) // refused
	is.NoErr(c.Login("u@leadline.test", "pw").Wait())
	sel, err := c.Select("INBOX", nil).Wait()
	is.NoErr(err)
	is.Equal(sel.NumMessages, uint32(1))
	before := sel.UIDValidity

	idle, err := c.Idle()
	is.NoErr(err)
	s.WaitIdle(t)
	s.Cut() // during IDLE
	<-c.Closed()
	_ = idle.Close()

	s.ResetUIDValidity(t)
	c2, err := imapclient.DialInsecure(s.Addr(), nil)
	is.NoErr(err)
	defer c2.Close()
	is.NoErr(c2.Login("u@leadline.test", "pw").Wait())
	sel, err = c2.Select("INBOX", nil).Wait()
	is.NoErr(err)
	is.Equal(sel.NumMessages, uint32(1)) // the same messages
	is.True(sel.UIDValidity != before)   // under a new UIDVALIDITY
	is.Equal(s.Logins(), 2)
}

func TestFaultSMTP(t *testing.T) {
	is := is.New(t)
	ok := mailtest.NewSMTP(t, "u", "pw", mailtest.SMTPAccept)
	is.NoErr(send(ok, "pw"))
	is.Equal(len(ok.Received()), 1)
	var se *smtp.SMTPError
	is.True(errors.As(send(ok, "wrong"), &se))
	is.Equal(se.Code, 535)

	cut := mailtest.NewSMTP(t, "u", "pw", mailtest.SMTPCutAfterData)
	err := send(cut, "pw")
	is.True(err != nil) // no answer to DATA
	is.Equal(len(cut.Received()), 0)

	down := mailtest.Down(t)
	_, err = net.Dial("tcp", down.Addr())
	is.True(err != nil) // nothing listens
}

func send(s *mailtest.SMTP, password string) error {
	c, err := smtp.Dial(s.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", s.Username, password)); err != nil {
		return err
	}
	return c.SendMail("a@leadline.test", []string{"b@acme.test"}, strings.NewReader("Subject: x\r\n\r\nx\r\n"))
}
