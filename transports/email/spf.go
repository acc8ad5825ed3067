package email

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// spfMaxLookups is RFC 7208 §4.6.4's limit on the terms of an SPF
// evaluation that query DNS (include, a, mx, ptr, exists, redirect): past
// it, receivers answer permerror and authorise no server.
const spfMaxLookups = 10

// spfRecord is one parsed SPF record.
type spfRecord struct {
	domain   string
	text     string
	terms    []spfTerm
	redirect string
}

// spfTerm is one mechanism: its qualifier, name and argument.
type spfTerm struct {
	qual   byte   // + - ~ ?
	mech   string // all, include, a, mx, ptr, ip4, ip6, exists
	target string // the domain of include, a, mx, ptr, exists ("" for a and mx: the record's own)
	prefix netip.Prefix
	cidr4  int
	cidr6  int
}

func (t spfTerm) String() string {
	s := t.mech
	if t.qual != '+' {
		s = string(t.qual) + s
	}
	switch {
	case t.prefix.IsValid():
		s += ":" + t.prefix.String()
	case t.target != "":
		s += ":" + t.target
	}
	return s
}

// macro reports whether t's domain is an SPF macro (%{…}): what it
// names is known only for a given message.
func (t spfTerm) macro() bool { return strings.Contains(t.target, "%") }

// spfError is a record receivers answer permerror for.
type spfError struct{ problem string }

func (e *spfError) Error() string { return e.problem }

// spfRecordsOf are the TXT strings that are SPF records (RFC 7208 §4.5).
func spfRecordsOf(txts []string) []string {
	var out []string
	for _, t := range txts {
		l := strings.ToLower(strings.TrimSpace(t))
		if l == "v=spf1" || strings.HasPrefix(l, "v=spf1 ") {
			out = append(out, strings.TrimSpace(t))
		}
	}
	return out
}

// parseSPF parses the record text published at domain.
func parseSPF(domain, text string) (*spfRecord, error) {
	r := &spfRecord{domain: domain, text: text}
	exp := false
	for _, f := range strings.Fields(text)[1:] {
		if eq := strings.IndexByte(f, '='); eq > 0 && !strings.ContainsAny(f[:eq], ":/") {
			name, val := strings.ToLower(f[:eq]), f[eq+1:]
			switch name {
			case "redirect":
				if r.redirect != "" {
					return nil, &spfError{"redirect= appears twice"}
				}
				if !validDomainSpec(val) {
					return nil, &spfError{fmt.Sprintf("redirect=%s does not name a domain", val)}
				}
				r.redirect = strings.ToLower(val)
			case "exp":
				if exp {
					return nil, &spfError{"exp= appears twice"}
				}
				exp = true
			}
			continue
		}
		t, err := parseTerm(f)
		if err != nil {
			return nil, err
		}
		r.terms = append(r.terms, t)
	}
	return r, nil
}

func parseTerm(f string) (spfTerm, error) {
	t := spfTerm{qual: '+', cidr4: 32, cidr6: 128}
	if strings.ContainsRune("+-~?", rune(f[0])) {
		t.qual, f = f[0], f[1:]
	}
	name, arg, hasArg := strings.Cut(f, ":")
	cidr := ""
	if i := strings.IndexByte(name, '/'); i >= 0 && !hasArg {
		name, cidr = name[:i], name[i:]
	}
	t.mech = strings.ToLower(name)
	bad := func(why string) (spfTerm, error) { return t, &spfError{fmt.Sprintf("%q %s", f, why)} }
	switch t.mech {
	case "all":
		if hasArg || cidr != "" {
			return bad("takes no argument")
		}
	case "include", "exists":
		if !hasArg || !validDomainSpec(arg) {
			return bad("needs a domain")
		}
		t.target = strings.ToLower(arg)
	case "ptr":
		if hasArg {
			if !validDomainSpec(arg) {
				return bad("names no domain")
			}
			t.target = strings.ToLower(arg)
		}
	case "a", "mx":
		if hasArg {
			if i := strings.IndexByte(arg, '/'); i >= 0 {
				arg, cidr = arg[:i], arg[i:]
			}
			if !validDomainSpec(arg) {
				return bad("names no domain")
			}
			t.target = strings.ToLower(arg)
		}
		if cidr != "" {
			v4, v6, ok := dualCIDR(cidr)
			if !ok {
				return bad("has a malformed prefix length")
			}
			t.cidr4, t.cidr6 = v4, v6
		}
	case "ip4", "ip6":
		if !hasArg {
			return bad("needs an address")
		}
		p, err := netip.ParsePrefix(arg)
		if err != nil {
			a, aerr := netip.ParseAddr(arg)
			if aerr != nil {
				return bad("is not an address or a range")
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if (t.mech == "ip4") != p.Addr().Is4() {
			return bad("has an address of the other family")
		}
		t.prefix = p.Masked()
	default:
		return bad("is not an SPF mechanism (all, include, a, mx, ptr, ip4, ip6, exists)")
	}
	return t, nil
}

// dualCIDR parses "/24", "//64" or "/24//64".
func dualCIDR(s string) (v4, v6 int, ok bool) {
	v4, v6 = 32, 128
	s4, s6, _ := strings.Cut(s, "//")
	if s4 != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(s4, "/"))
		if err != nil || !strings.HasPrefix(s4, "/") || n < 0 || n > 32 {
			return 0, 0, false
		}
		v4 = n
	}
	if strings.Contains(s, "//") {
		n, err := strconv.Atoi(s6)
		if err != nil || n < 0 || n > 128 {
			return 0, 0, false
		}
		v6 = n
	}
	return v4, v6, true
}

// validDomainSpec reports whether s can name a domain: a host name, or
// one with SPF macros.
func validDomainSpec(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t") {
		return false
	}
	if strings.Contains(s, "%") {
		return true
	}
	s = strings.TrimSuffix(s, ".")
	return strings.Contains(s, ".") && !strings.Contains(s, "..")
}

// spfWalk loads an SPF record and every record it includes or redirects
// to, counting the DNS look-ups an evaluation may make, then tells
// whether addresses are authorised.
type spfWalk struct {
	dc      *domainCheck
	lookups int
	records map[string]*spfRecord
	// includes are the domains included or redirected to, in order.
	includes []string
	addrs    map[string][]net.IP
	mxs      map[string][]*net.MX
}

// load fetches and parses domain's record and those it names. It
// returns a *spfError for what receivers answer permerror to, or the
// DNS error that stopped it.
func (w *spfWalk) load(ctx context.Context, domain string, path []string) (*spfRecord, error) {
	if r, ok := w.records[domain]; ok {
		return r, nil
	}
	if slices.Contains(path, domain) {
		return nil, &spfError{fmt.Sprintf("%s includes itself (%s)", domain, strings.Join(append(path, domain), " → "))}
	}
	txts, err := w.dc.txt(ctx, domain)
	if err != nil && !errors.Is(err, errNoRecord) {
		return nil, err
	}
	recs := spfRecordsOf(txts)
	switch {
	case len(recs) == 0 && len(path) == 0:
		return nil, nil
	case len(recs) == 0:
		return nil, &spfError{fmt.Sprintf("%s, which %s names, publishes no SPF record", domain, path[len(path)-1])}
	case len(recs) > 1:
		return nil, &spfError{fmt.Sprintf("%s publishes %d SPF records; there must be one", domain, len(recs))}
	}
	r, err := parseSPF(domain, recs[0])
	if err != nil {
		return nil, &spfError{fmt.Sprintf("%s: %v", domain, err)}
	}
	w.records[domain] = r
	path = append(path, domain)
	next := func(target string) error {
		w.lookups++
		if w.lookups > spfMaxLookups {
			return &spfError{fmt.Sprintf("more than %d DNS look-ups (include, a, mx, ptr, exists, redirect, counted through every include)", spfMaxLookups)}
		}
		if target == "" || strings.Contains(target, "%") {
			return nil
		}
		w.includes = append(w.includes, target)
		_, err := w.load(ctx, target, path)
		return err
	}
	for _, t := range r.terms {
		var err error
		switch t.mech {
		case "include":
			err = next(t.target)
		case "a", "mx", "ptr", "exists":
			err = next("")
		}
		if err != nil {
			return nil, err
		}
	}
	if r.redirect != "" {
		if err := next(r.redirect); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// spfVerdict is what a record answers for one address.
type spfVerdict struct {
	result string // pass, fail, softfail, neutral; "" when it cannot be told
	by     string // the term that decided, or that could not be evaluated
}

// eval is the result r gives ip (RFC 7208 §4.6). Terms that need the
// message (exists, ptr, macros) make the result unknown when they come
// before the one that decides.
func (w *spfWalk) eval(ctx context.Context, r *spfRecord, ip net.IP) spfVerdict {
	for _, t := range r.terms {
		match, known := w.matches(ctx, r, t, ip)
		if !known {
			return spfVerdict{by: t.String()}
		}
		if match {
			return spfVerdict{result: map[byte]string{'+': "pass", '-': "fail", '~': "softfail", '?': "neutral"}[t.qual], by: t.String()}
		}
	}
	if r.redirect != "" {
		if next := w.records[r.redirect]; next != nil {
			return w.eval(ctx, next, ip)
		}
		return spfVerdict{by: "redirect=" + r.redirect}
	}
	return spfVerdict{result: "neutral", by: "no mechanism matched"}
}

func (w *spfWalk) matches(ctx context.Context, r *spfRecord, t spfTerm, ip net.IP) (match, known bool) {
	addr, _ := netip.AddrFromSlice(ip)
	addr = addr.Unmap()
	target := t.target
	if target == "" {
		target = r.domain
	}
	switch t.mech {
	case "all":
		return true, true
	case "ip4", "ip6":
		return t.prefix.Contains(addr), true
	case "include":
		inc := w.records[t.target]
		if t.macro() || inc == nil {
			return false, false
		}
		v := w.eval(ctx, inc, ip)
		return v.result == "pass", v.result != ""
	case "a":
		if t.macro() {
			return false, false
		}
		ips, err := w.ips(ctx, target)
		if err != nil {
			return false, false
		}
		return inPrefixes(addr, ips, t), true
	case "mx":
		if t.macro() {
			return false, false
		}
		mxs, ok := w.mxs[target]
		if !ok {
			var err error
			if mxs, err = w.dc.mx(ctx, target); errors.Is(err, errNoRecord) {
				mxs = nil
			} else if err != nil {
				return false, false
			}
			w.mxs[target] = mxs
		}
		for _, m := range mxs {
			ips, err := w.ips(ctx, m.Host)
			if err != nil {
				return false, false
			}
			if inPrefixes(addr, ips, t) {
				return true, true
			}
		}
		return false, true
	}
	// ptr and exists depend on who connects and on the message.
	return false, false
}

func (w *spfWalk) ips(ctx context.Context, host string) ([]net.IP, error) {
	if ips, ok := w.addrs[host]; ok {
		return ips, nil
	}
	ips, err := w.dc.ips(ctx, host)
	if errors.Is(err, errNoRecord) {
		ips, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	w.addrs[host] = ips
	return ips, nil
}

func inPrefixes(addr netip.Addr, ips []net.IP, t spfTerm) bool {
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		a = a.Unmap()
		bits := t.cidr6
		if a.Is4() {
			bits = t.cidr4
		}
		if a.Is4() != addr.Is4() {
			continue
		}
		if p, err := a.Prefix(bits); err == nil && p.Contains(addr) {
			return true
		}
	}
	return false
}

// allTerm is the record's final all, or nil.
func (r *spfRecord) allTerm() *spfTerm {
	for i := range r.terms {
		if r.terms[i].mech == "all" {
			return &r.terms[i]
		}
	}
	return nil
}
