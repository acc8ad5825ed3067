package mailtest

import (
	"bytes"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// IMAP is an in-process IMAP server on loopback with one user and its
// INBOX, that tests turn against its clients: change the inbox's
// UIDVALIDITY, cut every connection (during IDLE too). A wrong password
// is refused as a real server refuses it. It supports IDLE.
type IMAP struct {
	HostPort
	Username, Password string

	srv  *imapserver.Server
	user *imapmemserver.User

	mu       sync.Mutex
	conns    map[net.Conn]bool
	messages [][]byte // every message delivered, for a reset inbox
	logins   int
	idling   chan struct{}
}

// NewIMAP starts an in-process IMAP server for username and password,
// closed when the test ends.
func NewIMAP(t testing.TB, username, password string) *IMAP {
	t.Helper()
	s := &IMAP{Username: username, Password: password, conns: map[net.Conn]bool{}, idling: make(chan struct{}, 16)}
	mem := imapmemserver.New()
	s.user = imapmemserver.NewUser(username, password)
	if err := s.user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(s.user)
	s.srv = imapserver.New(&imapserver.Options{
		NewSession: func(c *imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			s.mu.Lock()
			s.conns[c.NetConn()] = true
			s.mu.Unlock()
			return &faultSession{Session: mem.NewSession(), s: s, conn: c.NetConn()}, nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}},
		InsecureAuth: true,
		Logger:       log.New(io.Discard, "", 0),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.HostPort = HostPort{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// Deliver appends raw to the inbox, as a delivered message.
func (s *IMAP) Deliver(t testing.TB, raw []byte) {
	t.Helper()
	s.mu.Lock()
	s.messages = append(s.messages, raw)
	s.mu.Unlock()
	if err := s.appendInbox(raw); err != nil {
		t.Fatal(err)
	}
}

func (s *IMAP) appendInbox(raw []byte) error {
	_, err := s.user.Append("INBOX", literal{bytes.NewReader(raw), int64(len(raw))}, &imap.AppendOptions{Time: time.Now()})
	return err
}

// ResetUIDValidity makes the inbox anew with a new UIDVALIDITY and the
// same messages under new UIDs, as a server does whose mailbox was
// rebuilt; the connections are cut, as that server restarts.
func (s *IMAP) ResetUIDValidity(t testing.TB) {
	t.Helper()
	s.Cut()
	if err := s.user.Delete("INBOX"); err != nil {
		t.Fatal(err)
	}
	if err := s.user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	msgs := s.messages
	s.mu.Unlock()
	for _, m := range msgs {
		if err := s.appendInbox(m); err != nil {
			t.Fatal(err)
		}
	}
}

// Cut closes every open connection at once, without a word to the client
// (a server crash, a network cut).
func (s *IMAP) Cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
		delete(s.conns, c)
	}
}

// Idling is told each time a client starts IDLE.
func (s *IMAP) Idling() <-chan struct{} { return s.idling }

// WaitIdle waits until a client is in IDLE, at most 10 seconds.
func (s *IMAP) WaitIdle(t testing.TB) {
	t.Helper()
	select {
	case <-s.idling:
	case <-time.After(10 * time.Second):
		t.Fatal("mailtest: no client started IDLE in 10s")
	}
}

// Logins is how many times a client signed in.
func (s *IMAP) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// faultSession is a session of the in-memory server that tells the test
// server about sign-ins and IDLE.
type faultSession struct {
	imapserver.Session
	s    *IMAP
	conn net.Conn
}

func (f *faultSession) Login(username, password string) error {
	if err := f.Session.Login(username, password); err != nil {
		return err
	}
	f.s.mu.Lock()
	f.s.logins++
	f.s.mu.Unlock()
	return nil
}

func (f *faultSession) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	select {
	case f.s.idling <- struct{}{}:
	default:
	}
	return f.Session.Idle(w, stop)
}

func (f *faultSession) Close() error {
	f.s.mu.Lock()
	delete(f.s.conns, f.conn)
	f.s.mu.Unlock()
	return f.Session.Close()
}

// literal is a message as an IMAP literal.
type literal struct {
	*bytes.Reader
	size int64
}

func (l literal) Size() int64 { return l.size }
