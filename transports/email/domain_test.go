package email_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/dnstest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

// domainSender is an smtp sender of address sending through host.
func domainSender(address, host, selector string) *senders.Sender {
	return &senders.Sender{ID: apikit.NewID(), Name: "mail", Channel: senders.Email, Address: &address, Transport: email.Name,
		Settings: email.Settings(&email.Server{Host: host, Port: 587, Security: "starttls", Username: address, PasswordEnv: "UNUSED", DKIMSelector: selector}, nil)}
}

// zones serves a good domain and broken ones on a DNS server of the
// test's own.
func zones(t *testing.T) *dnstest.Server {
	t.Helper()
	srv := dnstest.Start(t)
	key2048, key1024 := dnstest.DKIMRecord(t, 2048), dnstest.DKIMRecord(t, 1024)
	// Every domain receives mail and has a submission host at 192.0.2.10.
	for _, d := range []string{"good.test", "nospf.test", "twospf.test", "deep.test", "open.test", "weak.test", "nodmarc.test", "monitor.test",
		"bad.test", "gmail.test", "sub.org.test"} {
		srv.Add(t, d+". 300 IN MX 10 mx."+d+".", "mx."+d+". 300 IN A 192.0.2.25", "smtp."+d+". 300 IN A 192.0.2.10")
		if d != "nodmarc.test" && d != "monitor.test" && d != "sub.org.test" {
			srv.TXT("_dmarc."+d, "v=DMARC1; p=reject; adkim=s; rua=mailto:dmarc@"+d)
		}
		srv.TXT("google._domainkey."+d, key2048)
	}
	srv.Add(t, "relay.good.test. 300 IN A 198.51.100.7", "relay.good.test. 300 IN AAAA 2001:db8::7")
	srv.TXT("good.test", "google-site-verification=abc")
	srv.TXT("good.test", "v=spf1 ip4:192.0.2.0/24 include:_spf.good.test -all")
	srv.TXT("_spf.good.test", "v=spf1 a:relay.good.test mx ~all")
	srv.TXT("twospf.test", "v=spf1 ip4:192.0.2.0/24 -all")
	srv.TXT("twospf.test", "v=spf1 include:_spf.google.com ~all")
	// Six includes of three look-ups each: 18, over RFC 7208's 10.
	srv.TXT("deep.test", "v=spf1 include:i1.deep.test include:i2.deep.test include:i3.deep.test include:i4.deep.test include:i5.deep.test include:i6.deep.test -all")
	for _, i := range []string{"i1", "i2", "i3", "i4", "i5", "i6"} {
		srv.TXT(i+".deep.test", "v=spf1 a mx -all")
	}
	srv.TXT("open.test", "v=spf1 ip4:198.51.100.0/24 -all")
	srv.TXT("weak.test", "v=spf1 ip4:192.0.2.10 -all")
	srv.TXT("mail._domainkey.weak.test", key1024)
	srv.TXT("nodmarc.test", "v=spf1 ip4:192.0.2.10 -all")
	srv.TXT("monitor.test", "v=spf1 ip4:192.0.2.10 -all")
	srv.TXT("_dmarc.monitor.test", "v=DMARC1; p=none")
	srv.TXT("bad.test", "v=spf1 ip4:300.1.1.1 -all")
	srv.TXT("gmail.test", "v=spf1 include:_spf.google.com ~all")
	srv.TXT("_spf.google.com", "v=spf1 ip4:203.0.113.0/24 ~all")
	srv.TXT("sub.org.test", "v=spf1 ip4:192.0.2.10 -all")
	srv.TXT("_dmarc.org.test", "v=DMARC1; p=reject; sp=quarantine")
	return srv
}

func resultOf(r *email.DomainReport, check string) email.DomainResult {
	for _, x := range r.Results {
		if strings.HasPrefix(x.Check, check) {
			return x
		}
	}
	return email.DomainResult{}
}

// TestDomainCheck checks good and broken domains on a DNS server of the
// test's own: each part says pass, warn or fail, and what to fix.
func TestDomainCheck(t *testing.T) {
	srv := zones(t)
	dc := email.NewDomainChecker(email.DomainConfig{Resolver: email.ResolverAt(srv.Addr), Clock: apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))})
	ctx := context.Background()
	type want struct {
		check   string
		verdict email.Verdict
		says    string
	}
	for name, c := range map[string]struct {
		sender *senders.Sender
		want   []want
	}{
		"good": {domainSender("sales@good.test", "smtp.good.test", ""), []want{
			{"MX", email.Pass, "mx.good.test (10)"},
			{"SPF", email.Pass, "3 of 10 DNS look-ups"},
			{"SPF authorises smtp.good.test", email.Pass, "192.0.2.10) is authorised"},
			{"DKIM", email.Pass, "google: 2048-bit RSA key"},
			{"DMARC", email.Pass, "p=reject, alignment DKIM strict (adkim) and SPF relaxed (aspf)"}}},
		"no SPF": {domainSender("sales@nospf.test", "smtp.nospf.test", ""), []want{{"SPF", email.Fail, "publishes no SPF record"}}},
		"two SPF records": {domainSender("sales@twospf.test", "smtp.twospf.test", ""), []want{
			{"SPF", email.Fail, "twospf.test publishes 2 SPF records; there must be one"}}},
		"over 10 look-ups": {domainSender("sales@deep.test", "smtp.deep.test", ""), []want{{"SPF", email.Fail, "more than 10 DNS look-ups"}}},
		"host not authorised": {domainSender("sales@open.test", "smtp.open.test", ""), []want{
			{"SPF", email.Pass, "0 of 10"},
			{"SPF authorises smtp.open.test", email.Fail, "192.0.2.10 (fail by -all)"}}},
		"malformed SPF":      {domainSender("sales@bad.test", "smtp.bad.test", ""), []want{{"SPF", email.Fail, `"ip4:300.1.1.1" is not an address`}}},
		"a provider's host":  {domainSender("sales@gmail.test", "smtp.gmail.com", ""), []want{{"SPF authorises smtp.gmail.com", email.Pass, "includes _spf.google.com"}}},
		"not the provider's": {domainSender("sales@good.test", "smtp.office365.com", ""), []want{{"SPF authorises", email.Fail, "does not include spf.protection.outlook.com"}}},
		"a local relay":      {domainSender("sales@good.test", "127.0.0.1", ""), []want{{"SPF authorises", email.Warn, "cannot be told"}}},
		"1024-bit DKIM":      {domainSender("sales@weak.test", "smtp.weak.test", "mail"), []want{{"DKIM", email.Warn, "mail: 1024-bit RSA key"}}},
		"no key at selector": {domainSender("sales@good.test", "smtp.good.test", "s2048"), []want{{"DKIM", email.Fail, "no DKIM key at s2048._domainkey.good.test"}}},
		"no usual selector":  {domainSender("sales@nohost.good.test", "smtp.good.test", ""), []want{{"MX", email.Fail, "has no MX record"}, {"DKIM", email.Warn, "no DKIM key at the usual selectors"}}},
		"no DMARC":           {domainSender("sales@nodmarc.test", "smtp.nodmarc.test", ""), []want{{"DMARC", email.Fail, "no DMARC record at _dmarc.nodmarc.test"}}},
		"p=none":             {domainSender("sales@monitor.test", "smtp.monitor.test", ""), []want{{"DMARC", email.Warn, "p=none"}}},
		"the org's DMARC":    {domainSender("sales@sub.org.test", "smtp.sub.org.test", ""), []want{{"DMARC", email.Pass, "p=quarantine, alignment DKIM relaxed (adkim) and SPF relaxed (aspf), from _dmarc.org.test"}}},
	} {
		t.Run(name, func(t *testing.T) {
			r, ok := dc.Check(ctx, c.sender)
			if !ok {
				t.Fatal("no domain to check")
			}
			for _, w := range c.want {
				got := resultOf(r, w.check)
				if got.Verdict != w.verdict || !strings.Contains(got.Detail, w.says) {
					t.Errorf("%s: got %s %q, want %s %q", w.check, got.Verdict, got.Detail, w.verdict, w.says)
				}
				if (got.Verdict == email.Pass) != (got.Remedy == "") {
					t.Errorf("%s: %s with remedy %q", w.check, got.Verdict, got.Remedy)
				}
			}
			if r.Failed() != (name != "good" && name != "a local relay" && name != "1024-bit DKIM" && name != "p=none" && name != "a provider's host" && name != "the org's DMARC") {
				t.Errorf("failed: %v in %+v", r.Failed(), r.Results)
			}
		})
	}
}

// TestDomainCheckOnlySMTPSenders: a sender that sends no email over SMTP
// has no domain to check.
func TestDomainCheckOnlySMTPSenders(t *testing.T) {
	is := is.New(t)
	srv := dnstest.Start(t)
	dc := email.NewDomainChecker(email.DomainConfig{Resolver: email.ResolverAt(srv.Addr)})
	s := domainSender("sales@good.test", "smtp.good.test", "")
	s.Transport = senders.TransportSandbox
	_, ok := dc.Check(context.Background(), s)
	is.True(!ok)
	_, ok = dc.Check(context.Background(), &senders.Sender{Channel: senders.LinkedIn, Transport: "unipile"})
	is.True(!ok)
	is.Equal(srv.Queries(), 0)
}

// fakeHealth records the signals RecordDomain gives.
type fakeHealth struct{ signals []string }

func (f *fakeHealth) Signal(_ context.Context, s *senders.Sender, signal, message string) error {
	f.signals = append(f.signals, signal)
	if signal == senders.SignalDomainCheckFailed {
		s.HealthReasons = []senders.HealthReason{{Code: signal, Message: message}}
	} else {
		s.HealthReasons = nil
	}
	return nil
}

// TestDomainCheckHealth: a failing part is the health warning
// domain_check_failed; the same failure again writes nothing; DNS that
// does not answer changes nothing; a domain fixed clears it. Reports are
// reused for an hour of the clock.
func TestDomainCheckHealth(t *testing.T) {
	is := is.New(t)
	srv := zones(t)
	clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	dc := email.NewDomainChecker(email.DomainConfig{Resolver: email.ResolverAt(srv.Addr), Clock: clock})
	ctx := context.Background()
	h := &fakeHealth{}
	s := domainSender("sales@nodmarc.test", "smtp.nodmarc.test", "")

	r, fresh, ok := dc.Report(ctx, s)
	is.True(ok && fresh)
	is.NoErr(email.RecordDomain(ctx, h, s, r))
	is.Equal(h.signals, []string{senders.SignalDomainCheckFailed})
	is.True(strings.Contains(s.HealthReasons[0].Message, "DMARC: no DMARC record at _dmarc.nodmarc.test. Publish a TXT record at _dmarc.nodmarc.test"))
	queries := srv.Queries()
	r, fresh, _ = dc.Report(ctx, s)
	is.True(!fresh)
	is.Equal(srv.Queries(), queries) // reused: DNS is not asked again
	is.NoErr(email.RecordDomain(ctx, h, s, r))
	is.Equal(len(h.signals), 1) // the same failure writes nothing

	// DNS fails: the warning stays as it is.
	srv.TXT("_dmarc.nodmarc.test", "v=DMARC1; p=quarantine")
	srv.Fail("nodmarc.test")
	clock.Advance(email.DomainTTL)
	r, fresh, _ = dc.Report(ctx, s)
	is.True(fresh)
	is.True(!r.Complete())
	is.True(!r.Failed())
	is.Equal(resultOf(r, "MX").Detail[:len("DNS did not answer")], "DNS did not answer")
	is.NoErr(email.RecordDomain(ctx, h, s, r))
	is.Equal(len(h.signals), 1)

	// Fixed, and DNS answers: the warning is cleared.
	fixed := domainSender("sales@monitor.test", "smtp.monitor.test", "")
	fixed.HealthReasons = s.HealthReasons
	r, _ = dc.Check(ctx, fixed)
	is.True(r.Complete() && !r.Failed())
	is.NoErr(email.RecordDomain(ctx, h, fixed, r))
	is.Equal(h.signals, []string{senders.SignalDomainCheckFailed, senders.SignalDomainCheckPassed})
}

// TestDomainCheckTimeout: a DNS server that never answers costs each
// query its timeout, and the check ends within its budget with every
// part unchecked.
func TestDomainCheckTimeout(t *testing.T) {
	is := is.New(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	is.NoErr(err)
	defer pc.Close()
	dc := email.NewDomainChecker(email.DomainConfig{Resolver: email.ResolverAt(pc.LocalAddr().String()), LookupTimeout: 50 * time.Millisecond})
	start := time.Now()
	r, ok := dc.Check(context.Background(), domainSender("sales@good.test", "smtp.good.test", ""))
	is.True(ok)
	is.True(time.Since(start) < email.DomainBudget)
	is.True(!r.Complete())
	for _, x := range r.Results {
		is.Equal(x.Verdict, email.Warn)
	}
}
