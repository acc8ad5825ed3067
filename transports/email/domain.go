package email

import (
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
)

// Resolver is what the domain check asks DNS. *net.Resolver is one:
// net.DefaultResolver, or ResolverAt a server of one's choosing.
type Resolver interface {
	LookupMX(ctx context.Context, name string) ([]*net.MX, error)
	LookupTXT(ctx context.Context, name string) ([]string, error)
	LookupIP(ctx context.Context, network, host string) ([]net.IP, error)
}

// ResolverAt is a resolver that sends every query to the DNS server at
// addr (host:port), whatever the system's configuration says.
func ResolverAt(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// The domain check's bounds. A check runs its four parts side by side;
// a DNS server that does not answer costs one LookupTimeout per query in
// a chain, and never more than DomainBudget in all.
const (
	LookupTimeout = 2 * time.Second
	DomainBudget  = 6 * time.Second
	// DomainTTL is how long DomainChecker.Report reuses a report: DNS
	// records change when someone edits them, rarely more than daily.
	DomainTTL = time.Hour
	// domainRetry is how long a report DNS did not fully answer is reused.
	domainRetry = 5 * time.Minute
)

// UsualSelectors are the DKIM selectors the check tries when the sender
// names none: Google Workspace's, Microsoft 365's two, and common
// defaults of hosting panels and sending services.
var UsualSelectors = []string{"google", "selector1", "selector2", "default", "s1", "s2", "k1"}

// Verdict is what one part of the domain check concluded.
type Verdict string

// The verdicts. Only a fail becomes a health warning on the sender.
const (
	Pass Verdict = "pass"
	Warn Verdict = "warn"
	Fail Verdict = "fail"
)

// DomainResult is one part of the domain check: MX, SPF, the SPF
// authorisation of the SMTP host, DKIM or DMARC.
type DomainResult struct {
	Check   string
	Verdict Verdict
	// Detail is what DNS holds; Remedy what to change (empty on a pass).
	Detail string
	Remedy string
	// Unchecked: DNS did not answer (a timeout, a server failure), so the
	// verdict says nothing about the domain.
	Unchecked bool
}

// Mark is the result's sign in `leadline senders check` and the console:
// ✓ pass, ! warn, ✗ fail.
func (r DomainResult) Mark() string {
	return map[Verdict]string{Pass: "✓", Warn: "!", Fail: "✗"}[r.Verdict]
}

// DomainReport is the domain check of one sender's mail domain.
type DomainReport struct {
	Domain    string
	Results   []DomainResult
	CheckedAt time.Time
}

// Failed reports whether a part failed.
func (r *DomainReport) Failed() bool {
	return slices.ContainsFunc(r.Results, func(x DomainResult) bool { return x.Verdict == Fail })
}

// Complete reports whether DNS answered every part.
func (r *DomainReport) Complete() bool {
	return !slices.ContainsFunc(r.Results, func(x DomainResult) bool { return x.Unchecked })
}

// Summary is the health message of the parts that failed.
func (r *DomainReport) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The mail domain %s fails the checks receivers make:", r.Domain)
	for _, x := range r.Results {
		if x.Verdict == Fail {
			fmt.Fprintf(&b, " %s: %s. %s", x.Check, x.Detail, x.Remedy)
		}
	}
	return b.String()
}

// DomainConfig is what a DomainChecker is built with.
type DomainConfig struct {
	// Resolver answers the queries (default net.DefaultResolver).
	Resolver Resolver
	Clock    apikit.Clock
	// LookupTimeout bounds each query (default LookupTimeout).
	LookupTimeout time.Duration
}

// DomainChecker checks the DNS of email senders' domains: MX, SPF (RFC
// 7208), DKIM (RFC 6376) and DMARC (RFC 7489). It keeps each report for
// DomainTTL, so that a page that shows one stays cheap.
type DomainChecker struct {
	cfg   DomainConfig
	mu    sync.Mutex
	cache map[string]cachedReport
}

type cachedReport struct {
	report *DomainReport
	until  time.Time
}

// NewDomainChecker returns a domain checker.
func NewDomainChecker(cfg DomainConfig) *DomainChecker {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Clock == nil {
		cfg.Clock = apikit.SystemClock{}
	}
	if cfg.LookupTimeout <= 0 {
		cfg.LookupTimeout = LookupTimeout
	}
	return &DomainChecker{cfg: cfg, cache: map[string]cachedReport{}}
}

// domainOf is the domain of s's address, with the DKIM selector and the
// SMTP host it is checked for; ok is false for a sender that sends no
// email over SMTP.
func domainOf(s *senders.Sender) (domain, selector, host string, ok bool) {
	if s.Transport != Name || s.Address == nil {
		return "", "", "", false
	}
	at := strings.LastIndexByte(*s.Address, '@')
	domain = strings.ToLower(strings.TrimSuffix(strings.TrimSpace((*s.Address)[at+1:]), "."))
	if at < 0 || domain == "" {
		return "", "", "", false
	}
	if m := smtpOf(s); m != nil {
		selector, host = strings.ToLower(m.DKIMSelector), m.Host
	}
	return domain, selector, host, true
}

// Check checks s's domain now; ok is false for a sender that sends no
// email over SMTP (nothing to check).
func (c *DomainChecker) Check(ctx context.Context, s *senders.Sender) (*DomainReport, bool) {
	domain, selector, host, ok := domainOf(s)
	if !ok {
		return nil, false
	}
	d := &domainCheck{r: c.cfg.Resolver, timeout: c.cfg.LookupTimeout}
	r := d.run(ctx, domain, selector, host)
	r.CheckedAt = c.cfg.Clock.Now()
	ttl := DomainTTL
	if !r.Complete() {
		ttl = domainRetry
	}
	c.mu.Lock()
	c.cache[domain+"|"+selector+"|"+host] = cachedReport{report: r, until: r.CheckedAt.Add(ttl)}
	c.mu.Unlock()
	return r, true
}

// Report is s's latest report, or a check now when it has none younger
// than DomainTTL (DNS did not answer: 5 minutes). fresh tells which.
func (c *DomainChecker) Report(ctx context.Context, s *senders.Sender) (r *DomainReport, fresh, ok bool) {
	domain, selector, host, ok := domainOf(s)
	if !ok {
		return nil, false, false
	}
	c.mu.Lock()
	e, hit := c.cache[domain+"|"+selector+"|"+host]
	c.mu.Unlock()
	if hit && c.cfg.Clock.Now().Before(e.until) {
		return e.report, false, true
	}
	r, _ = c.Check(ctx, s)
	return r, true, true
}

// HealthSignaler records a sender's health signals: *senders.Service.
type HealthSignaler interface {
	Signal(ctx context.Context, s *senders.Sender, signal, message string) error
}

// RecordDomain turns report into s's health: a failing part is the
// warning domain_check_failed with what to fix; a report that DNS fully
// answered with nothing failing clears it. A report DNS did not fully
// answer leaves a warning as it is, and an unchanged one writes nothing.
func RecordDomain(ctx context.Context, h HealthSignaler, s *senders.Sender, report *DomainReport) error {
	i := slices.IndexFunc(s.HealthReasons, func(r senders.HealthReason) bool { return r.Code == senders.SignalDomainCheckFailed })
	switch {
	case report.Failed():
		msg := report.Summary()
		if i >= 0 && s.HealthReasons[i].Message == msg {
			return nil
		}
		return h.Signal(ctx, s, senders.SignalDomainCheckFailed, msg)
	case i >= 0 && report.Complete():
		return h.Signal(ctx, s, senders.SignalDomainCheckPassed, "")
	}
	return nil
}

// domainCheck is one run of the check.
type domainCheck struct {
	r       Resolver
	timeout time.Duration
}

// errNoRecord is a name with no record of the type asked (NXDOMAIN or no
// data): an answer, unlike a timeout.
var errNoRecord = errors.New("no record")

func lookupErr(err error) error {
	var de *net.DNSError
	if errors.As(err, &de) && de.IsNotFound {
		return errNoRecord
	}
	return err
}

// fqdn roots name, so that the system's search domains are never tried.
func fqdn(name string) string { return strings.TrimSuffix(name, ".") + "." }

func (d *domainCheck) txt(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	v, err := d.r.LookupTXT(ctx, fqdn(name))
	return v, lookupErr(err)
}

func (d *domainCheck) mx(ctx context.Context, name string) ([]*net.MX, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	v, err := d.r.LookupMX(ctx, fqdn(name))
	return v, lookupErr(err)
}

func (d *domainCheck) ips(ctx context.Context, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	v, err := d.r.LookupIP(ctx, "ip", fqdn(host))
	return v, lookupErr(err)
}

// unchecked is the result of a part DNS did not answer.
func unchecked(check string, err error) DomainResult {
	return DomainResult{Check: check, Verdict: Warn, Unchecked: true, Detail: fmt.Sprintf("DNS did not answer (%v)", err),
		Remedy: "Run the check again later; if it persists, check that the server can reach its DNS resolver."}
}

// run checks domain's four parts side by side, within DomainBudget.
func (d *domainCheck) run(ctx context.Context, domain, selector, host string) *DomainReport {
	ctx, cancel := context.WithTimeout(ctx, DomainBudget)
	defer cancel()
	var mx, dkim, dmarc DomainResult
	var spf []DomainResult
	var wg sync.WaitGroup
	wg.Go(func() { mx = d.checkMX(ctx, domain) })
	wg.Go(func() { spf = d.checkSPF(ctx, domain, host) })
	wg.Go(func() { dkim = d.checkDKIM(ctx, domain, selector) })
	wg.Go(func() { dmarc = d.checkDMARC(ctx, domain) })
	wg.Wait()
	return &DomainReport{Domain: domain, Results: slices.Concat([]DomainResult{mx}, spf, []DomainResult{dkim, dmarc})}
}

func (d *domainCheck) checkMX(ctx context.Context, domain string) DomainResult {
	const check = "MX"
	mxs, err := d.mx(ctx, domain)
	switch {
	case errors.Is(err, errNoRecord) || (err == nil && len(mxs) == 0):
		return DomainResult{Check: check, Verdict: Fail, Detail: domain + " has no MX record",
			Remedy: "Publish the MX records your mail provider gives: receivers distrust mail from a domain that cannot receive any, and replies and bounces would be lost."}
	case err != nil:
		return unchecked(check, err)
	}
	if len(mxs) == 1 && strings.Trim(mxs[0].Host, ".") == "" {
		return DomainResult{Check: check, Verdict: Fail, Detail: domain + " publishes a null MX (RFC 7505): it says it receives no mail",
			Remedy: "Replace the null MX with your mail provider's MX records: replies to this sender go to this domain."}
	}
	var hosts []string
	for _, m := range mxs {
		hosts = append(hosts, fmt.Sprintf("%s (%d)", strings.TrimSuffix(m.Host, "."), m.Pref))
	}
	return DomainResult{Check: check, Verdict: Pass, Detail: strings.Join(hosts, ", ")}
}

// spfProviders are the mail providers whose submission servers are
// authorised by their SPF include rather than by their own addresses.
var spfProviders = []struct {
	name, include string
	hosts         []string
}{
	{"Google", "_spf.google.com", []string{"gmail.com", "google.com", "googlemail.com"}},
	{"Microsoft 365", "spf.protection.outlook.com", []string{"office365.com", "outlook.com"}},
}

func (d *domainCheck) checkSPF(ctx context.Context, domain, host string) []DomainResult {
	const check = "SPF"
	w := &spfWalk{dc: d, records: map[string]*spfRecord{}, addrs: map[string][]net.IP{}, mxs: map[string][]*net.MX{}}
	rec, err := w.load(ctx, domain, nil)
	var perm *spfError
	switch {
	case errors.As(err, &perm):
		remedy := "Correct the record: receivers treat a malformed SPF record as an error (permerror, RFC 7208 §4.6) and authorise no server."
		switch {
		case w.lookups > spfMaxLookups:
			remedy = "Bring it to 10 look-ups or fewer (RFC 7208 §4.6.4): remove the includes of services you no longer send with, or replace a and mx mechanisms with ip4 and ip6 ranges; past 10, receivers authorise no server."
		case strings.Contains(perm.problem, "SPF records; there must be one") && strings.HasPrefix(perm.problem, domain+" "):
			remedy = "Merge them into one TXT record starting v=spf1 (RFC 7208 §3.2): with two, receivers authorise no server."
		}
		return []DomainResult{{Check: check, Verdict: Fail, Detail: perm.problem, Remedy: remedy}}
	case err != nil:
		return []DomainResult{unchecked(check, err)}
	case rec == nil:
		return []DomainResult{{Check: check, Verdict: Fail, Detail: domain + " publishes no SPF record",
			Remedy: "Publish one TXT record at " + domain + " listing the servers that send its mail, as your provider documents: " +
				"\"v=spf1 include:_spf.google.com ~all\" for Google Workspace, \"v=spf1 include:spf.protection.outlook.com -all\" for Microsoft 365."}}
	}
	res := DomainResult{Check: check, Verdict: Pass, Detail: fmt.Sprintf("%q, %d of %d DNS look-ups", rec.text, w.lookups, spfMaxLookups)}
	switch all := rec.allTerm(); {
	case all != nil && all.qual == '+':
		res.Verdict, res.Remedy = Fail, "Replace +all with ~all or -all: +all lets any server on the internet send as "+domain+"."
	case (all == nil && rec.redirect == "") || (all != nil && all.qual == '?'):
		res.Verdict, res.Remedy = Warn, "End the record with ~all (or -all once every service that sends as "+domain+" is listed), so that receivers can tell other servers are not yours."
	}
	out := []DomainResult{res}
	if host != "" {
		out = append(out, d.spfHost(ctx, w, rec, host))
	}
	return out
}

// spfHost tells whether rec authorises the SMTP host, when it can be told.
func (d *domainCheck) spfHost(ctx context.Context, w *spfWalk, rec *spfRecord, host string) DomainResult {
	check := "SPF authorises " + host
	lhost := strings.ToLower(strings.TrimSuffix(host, "."))
	for _, p := range spfProviders {
		if !slices.ContainsFunc(p.hosts, func(h string) bool { return lhost == h || strings.HasSuffix(lhost, "."+h) }) {
			continue
		}
		if slices.Contains(w.includes, p.include) {
			return DomainResult{Check: check, Verdict: Pass, Detail: fmt.Sprintf("%s is %s's; the record includes %s", host, p.name, p.include)}
		}
		return DomainResult{Check: check, Verdict: Fail, Detail: fmt.Sprintf("%s is %s's, and the record does not include %s", host, p.name, p.include),
			Remedy: fmt.Sprintf("Add include:%s to the SPF record of %s, before its all.", p.include, rec.domain)}
	}
	ips, err := d.ips(ctx, host)
	if errors.Is(err, errNoRecord) {
		return DomainResult{Check: check, Verdict: Warn, Detail: host + " has no address in DNS", Remedy: "Check smtp.host in the sender's settings."}
	}
	if err != nil {
		return unchecked(check, err)
	}
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() {
			return DomainResult{Check: check, Verdict: Warn,
				Detail: fmt.Sprintf("cannot be told: %s is %s, a local or private address, so mail leaves through a relay whose public address leadline does not know", host, ip),
				Remedy: "Make sure the SPF record lists the public address the relay sends from (ip4:, ip6:, or the relay provider's include:)."}
		}
	}
	var refused []string
	for _, ip := range ips {
		v := w.eval(ctx, rec, ip)
		switch v.result {
		case "pass":
		case "":
			return DomainResult{Check: check, Verdict: Warn,
				Detail: fmt.Sprintf("cannot be told for %s: %s depends on the message or on data leadline does not have", ip, v.by),
				Remedy: "Nothing to change if your provider documents this record; check its SPF with a message sent to a test mailbox (Authentication-Results)."}
		default:
			refused = append(refused, fmt.Sprintf("%s (%s by %s)", ip, v.result, v.by))
		}
	}
	if len(refused) > 0 {
		return DomainResult{Check: check, Verdict: Fail, Detail: "the record does not authorise " + host + " at " + strings.Join(refused, ", "),
			Remedy: fmt.Sprintf("Add ip4:/ip6: mechanisms for %s, or your provider's include:, to the SPF record of %s, before its all; if the provider sends from other servers than %s, add the include its documentation gives.", host, rec.domain, host)}
	}
	var addrs []string
	for _, ip := range ips {
		addrs = append(addrs, ip.String())
	}
	return DomainResult{Check: check, Verdict: Pass, Detail: host + " (" + strings.Join(addrs, ", ") + ") is authorised"}
}

// dkimKey is what one selector publishes.
type dkimKey struct {
	selector string
	verdict  Verdict
	detail   string
	remedy   string
}

func (d *domainCheck) checkDKIM(ctx context.Context, domain, selector string) DomainResult {
	const check = "DKIM"
	sels := UsualSelectors
	if selector != "" {
		sels = []string{selector}
	}
	keys := make([]*dkimKey, len(sels))
	errs := make([]error, len(sels))
	var wg sync.WaitGroup
	for i, sel := range sels {
		wg.Go(func() {
			txts, err := d.txt(ctx, sel+"._domainkey."+domain)
			if err != nil {
				if !errors.Is(err, errNoRecord) {
					errs[i] = err
				}
				return
			}
			keys[i] = dkimKeyOf(sel, domain, txts)
		})
	}
	wg.Wait()
	found := slices.DeleteFunc(keys, func(k *dkimKey) bool { return k == nil })
	if len(found) == 0 {
		if err := errors.Join(errs...); err != nil {
			return unchecked(check, errs[slices.IndexFunc(errs, func(e error) bool { return e != nil })])
		}
		if selector != "" {
			return DomainResult{Check: check, Verdict: Fail, Detail: fmt.Sprintf("no DKIM key at %s._domainkey.%s", selector, domain),
				Remedy: fmt.Sprintf("Turn on DKIM signing at your provider and publish the TXT record it gives at %s._domainkey.%s, or correct smtp.dkim_selector.", selector, domain)}
		}
		return DomainResult{Check: check, Verdict: Warn, Detail: "no DKIM key at the usual selectors (" + strings.Join(UsualSelectors, ", ") + ")",
			Remedy: "Turn on DKIM signing at your provider (Google Workspace: Admin console › Apps › Gmail › Authenticate email; Microsoft 365: Defender › Email authentication settings › DKIM) and publish its key; " +
				"if it signs with another selector, name it in the sender's smtp.dkim_selector so that this check looks there."}
	}
	res := DomainResult{Check: check, Verdict: Pass}
	var details, remedies []string
	rank := map[Verdict]int{Pass: 0, Warn: 1, Fail: 2}
	for _, k := range found {
		details = append(details, k.selector+": "+k.detail)
		if rank[k.verdict] > rank[res.Verdict] {
			res.Verdict = k.verdict
		}
		if k.remedy != "" && !slices.Contains(remedies, k.remedy) {
			remedies = append(remedies, k.remedy)
		}
	}
	res.Detail, res.Remedy = strings.Join(details, "; "), strings.Join(remedies, " ")
	return res
}

// dkimKeyOf reads the key record of sel (RFC 6376 §3.6.1).
func dkimKeyOf(sel, domain string, txts []string) *dkimKey {
	k := &dkimKey{selector: sel, verdict: Fail}
	name := sel + "._domainkey." + domain
	tags := tagList(strings.Join(txts, ""))
	p, hasP := tags["p"]
	switch {
	case tags["v"] != "" && tags["v"] != "DKIM1":
		k.detail, k.remedy = "v="+tags["v"]+" is not DKIM1", "Publish the key record exactly as your provider gives it at "+name+"."
		return k
	case !hasP:
		k.detail, k.remedy = "the record has no p= (public key)", "Publish the key record exactly as your provider gives it at "+name+"."
		return k
	case p == "":
		k.detail, k.remedy = "the key is revoked (empty p=)", "Publish the provider's current key, or name the selector it signs with now in smtp.dkim_selector."
		return k
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(p), ""))
	if err != nil {
		k.detail, k.remedy = "p= is not base64", "Publish the key record exactly as your provider gives it at "+name+" (a key split over several strings must not lose characters)."
		return k
	}
	if strings.EqualFold(tags["k"], "ed25519") {
		if len(der) != ed25519.PublicKeySize {
			k.detail, k.remedy = "p= is not an Ed25519 key", "Publish the key record exactly as your provider gives it at "+name+"."
			return k
		}
		k.verdict, k.detail = Pass, "Ed25519 key (RFC 8463)"
		return k
	}
	var pub *rsa.PublicKey
	if key, err := x509.ParsePKIXPublicKey(der); err == nil {
		pub, _ = key.(*rsa.PublicKey)
	} else if key, err := x509.ParsePKCS1PublicKey(der); err == nil {
		pub = key
	}
	if pub == nil {
		k.detail, k.remedy = "p= is not an RSA public key", "Publish the key record exactly as your provider gives it at "+name+"."
		return k
	}
	bits := pub.N.BitLen()
	k.detail = fmt.Sprintf("%d-bit RSA key", bits)
	switch {
	case bits < 1024:
		k.remedy = "Receivers ignore RSA keys under 1024 bits (RFC 8301): generate a 2048-bit key at your provider and publish it."
	case bits < 2048:
		k.verdict, k.remedy = Warn, "1024 bits is the least receivers accept (RFC 8301) and 2048 is recommended: rotate to a 2048-bit key at your provider."
	default:
		k.verdict = Pass
	}
	return k
}

// tagList parses a DKIM or DMARC tag=value list.
func tagList(s string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(s, ";") {
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		out[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(val)
	}
	return out
}

func (d *domainCheck) checkDMARC(ctx context.Context, domain string) DomainResult {
	const check = "DMARC"
	recs, at, err := d.dmarcRecords(ctx, domain)
	if err == nil && len(recs) == 0 {
		// A subdomain without its own record follows its organisational
		// domain's (RFC 7489 §6.6.3).
		if org, oerr := publicsuffix.EffectiveTLDPlusOne(domain); oerr == nil && org != domain {
			recs, at, err = d.dmarcRecords(ctx, org)
		}
	}
	switch {
	case err != nil:
		return unchecked(check, err)
	case len(recs) == 0:
		return DomainResult{Check: check, Verdict: Fail, Detail: "no DMARC record at _dmarc." + domain,
			Remedy: fmt.Sprintf("Publish a TXT record at _dmarc.%s such as \"v=DMARC1; p=none; rua=mailto:dmarc@%s\", then move to p=quarantine once its reports show your mail aligns; Google and Yahoo require DMARC from bulk senders.", domain, domain)}
	case len(recs) > 1:
		return DomainResult{Check: check, Verdict: Fail, Detail: fmt.Sprintf("%d DMARC records at _dmarc.%s: receivers apply none of them", len(recs), at),
			Remedy: "Keep one DMARC record (RFC 7489 §6.6.3)."}
	}
	tags := tagList(recs[0])
	policy := strings.ToLower(tags["p"])
	if at != domain && tags["sp"] != "" {
		policy = strings.ToLower(tags["sp"])
	}
	if !slices.Contains([]string{"none", "quarantine", "reject"}, policy) {
		return DomainResult{Check: check, Verdict: Fail, Detail: fmt.Sprintf("the record at _dmarc.%s has no valid policy (p=%s)", at, tags["p"]),
			Remedy: "Set p=none, p=quarantine or p=reject in the DMARC record."}
	}
	align := func(tag string) string {
		if strings.EqualFold(tags[tag], "s") {
			return "strict"
		}
		return "relaxed"
	}
	detail := fmt.Sprintf("p=%s, alignment DKIM %s (adkim) and SPF %s (aspf)", policy, align("adkim"), align("aspf"))
	if at != domain {
		detail += ", from _dmarc." + at
	}
	if pct := tags["pct"]; pct != "" && pct != "100" {
		detail += ", applied to " + pct + "% of mail"
	}
	if policy == "none" {
		return DomainResult{Check: check, Verdict: Warn, Detail: detail,
			Remedy: "p=none only monitors: receivers act on nothing that fails. Once the aggregate reports (rua=) show your mail passes, move to p=quarantine, then p=reject."}
	}
	return DomainResult{Check: check, Verdict: Pass, Detail: detail}
}

// dmarcRecords are the DMARC records at _dmarc.domain.
func (d *domainCheck) dmarcRecords(ctx context.Context, domain string) ([]string, string, error) {
	txts, err := d.txt(ctx, "_dmarc."+domain)
	if errors.Is(err, errNoRecord) {
		return nil, domain, nil
	}
	if err != nil {
		return nil, domain, err
	}
	var out []string
	for _, t := range txts {
		if v, _, _ := strings.Cut(t, ";"); strings.EqualFold(strings.TrimSpace(v), "v=DMARC1") {
			out = append(out, t)
		}
	}
	return out, domain, nil
}
