// Package dnstest is a DNS server on loopback for tests: it answers, over
// UDP and TCP, from the records a test gives it, and asks no one else.
// Point a resolver at Addr (email.ResolverAt) and no query leaves the
// machine.
package dnstest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Server is a DNS server on loopback.
type Server struct {
	// Addr is where it listens (127.0.0.1:port, UDP and TCP).
	Addr string

	mu      sync.Mutex
	records map[string][]dns.RR
	fail    map[string]bool
	queries int
}

// Start starts a server with no records; it stops when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{records: map[string][]dns.RR{}, fail: map[string]bool{}}
	var pc net.PacketConn
	var ln net.Listener
	for range 10 {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatalf("dnstest: %v", err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		pc = nil
	}
	if pc == nil {
		t.Fatal("dnstest: no port free for both UDP and TCP")
	}
	s.Addr = pc.LocalAddr().String()
	h := dns.HandlerFunc(s.serve)
	udp := &dns.Server{PacketConn: pc, Handler: h}
	tcp := &dns.Server{Listener: ln, Handler: h}
	for _, srv := range []*dns.Server{udp, tcp} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return s
}

// Add serves records given as zone-file lines ("acme.test. 300 IN MX 10
// mx.acme.test.").
func (s *Server) Add(t testing.TB, lines ...string) {
	t.Helper()
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("dnstest: %q: %v", l, err)
		}
		s.put(rr)
	}
}

// TXT serves one TXT record of text at name, split into strings of 255
// characters as DNS requires of long ones (DKIM keys).
func (s *Server) TXT(name, text string) {
	var parts []string
	for len(text) > 255 {
		parts, text = append(parts, text[:255]), text[255:]
	}
	parts = append(parts, text)
	s.put(&dns.TXT{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 300}, Txt: parts})
}

// DKIMRecord is the DKIM key record (RFC 6376 §3.6.1) of a new RSA key
// of bits, to serve with TXT at <selector>._domainkey.<domain>.
func DKIMRecord(t testing.TB, bits int) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(der)
}

// Fail answers SERVFAIL to every query for name.
func (s *Server) Fail(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[strings.ToLower(dns.Fqdn(name))] = true
}

// Queries is how many queries the server has answered.
func (s *Server) Queries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

func (s *Server) put(rr dns.RR) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := strings.ToLower(rr.Header().Name)
	s.records[name] = append(s.records[name], rr)
}

// serve answers from the records: those of the type asked, NOERROR with
// none when the name has others, NXDOMAIN when it has none.
func (s *Server) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	s.mu.Lock()
	s.queries++
	for _, q := range req.Question {
		name := strings.ToLower(q.Name)
		if s.fail[name] {
			m.Rcode = dns.RcodeServerFailure
			continue
		}
		rrs, ok := s.records[name]
		if !ok {
			m.Rcode = dns.RcodeNameError
			continue
		}
		for _, rr := range rrs {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, dns.Copy(rr))
			}
		}
	}
	s.mu.Unlock()
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		size := dns.MinMsgSize
		if o := req.IsEdns0(); o != nil {
			size = int(o.UDPSize())
		}
		m.Truncate(size)
	}
	_ = w.WriteMsg(m)
}
