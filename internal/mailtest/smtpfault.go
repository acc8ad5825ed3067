package mailtest

import (
	"errors"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTPFault is how an in-process SMTP server fails.
type SMTPFault int

// The faults.
const (
	// SMTPAccept: no fault; messages are kept (Received).
	SMTPAccept SMTPFault = iota
	// SMTPCutAfterData: the message is read, then the connection is cut
	// before the server answers: the client cannot know whether it was
	// taken.
	SMTPCutAfterData
	// SMTPRefuseRcpt: every recipient is refused with 550 5.1.1 (user
	// unknown).
	SMTPRefuseRcpt
	// SMTPDeferRcpt: every recipient is deferred with 451 4.7.1
	// (greylisting).
	SMTPDeferRcpt
	// SMTPRefuseSender: MAIL FROM is refused with 554 5.7.1 (a policy
	// block on the sender).
	SMTPRefuseSender
)

// SMTP is an in-process SMTP server on loopback that asks for AUTH PLAIN
// with Username and Password (a wrong password is refused with 535) and
// fails as told.
type SMTP struct {
	HostPort
	Username, Password string
	Fault              SMTPFault

	mu       sync.Mutex
	received []Received
}

// Received is a message an SMTP server took.
type Received struct {
	From string
	To   []string
	Data []byte
}

// NewSMTP starts an in-process SMTP server, closed when the test ends.
func NewSMTP(t testing.TB, username, password string, fault SMTPFault) *SMTP {
	t.Helper()
	s := &SMTP{Username: username, Password: password, Fault: fault}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{s: s, conn: c.Conn()}, nil
	}))
	srv.Domain = "fault.leadline.test"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	srv.ErrorLog = log.New(io.Discard, "", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.HostPort = HostPort{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Received returns the messages the server took.
func (s *SMTP) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

type smtpSession struct {
	s      *SMTP
	conn   net.Conn
	authed bool
	msg    Received
}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

func (x *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != x.s.Username || password != x.s.Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication failed"}
		}
		x.authed = true
		return nil
	}), nil
}

func (x *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if !x.authed {
		return errAuthRequired
	}
	if x.s.Fault == SMTPRefuseSender {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Sender address rejected: policy"}
	}
	x.msg = Received{From: from}
	return nil
}

func (x *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	switch x.s.Fault {
	case SMTPRefuseRcpt:
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "User unknown"}
	case SMTPDeferRcpt:
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1}, Message: "Greylisted, try again later"}
	}
	x.msg.To = append(x.msg.To, to)
	return nil
}

func (x *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if x.s.Fault == SMTPCutAfterData {
		x.conn.Close()
		return errors.New("cut")
	}
	x.msg.Data = b
	x.s.mu.Lock()
	x.s.received = append(x.s.received, x.msg)
	x.s.mu.Unlock()
	return nil
}

func (x *smtpSession) Reset()        { x.msg = Received{} }
func (x *smtpSession) Logout() error { return nil }
