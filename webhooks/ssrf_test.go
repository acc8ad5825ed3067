package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/webhooks"
)

// fakeDNS answers from a table; a name can change its answer after the
// first lookup (rebinding).
type fakeDNS struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
}

func (f *fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	as, ok := f.answers[host]
	if !ok || len(as) == 0 {
		return nil, errors.New("no such host")
	}
	a := as[0]
	if len(as) > 1 {
		f.answers[host] = as[1:]
	}
	return a, nil
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestSSRFRefusals(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dns := &fakeDNS{answers: map[string][][]netip.Addr{
		"hooks.example.com":   {addrs("93.184.216.34")},
		"internal.example":    {addrs("10.0.0.7")},
		"mixed.example":       {addrs("93.184.216.34", "127.0.0.1")},
		"metadata.example":    {addrs("169.254.169.254")},
		"rebind.example":      {addrs("93.184.216.34"), addrs("127.0.0.1")},
		"v6mapped.example":    {addrs("::ffff:127.0.0.1")},
		"uniquelocal.example": {addrs("fd12:3456::1")},
	}}
	g := webhooks.Guard{Resolver: dns}
	for _, ok := range []string{"https://hooks.example.com/x", "https://93.184.216.34/x", "https://[2606:4700::1111]/x"} {
		_, err := g.CheckURL(ctx, ok)
		is.NoErr(err) // a public endpoint
	}
	for _, bad := range []string{
		"http://hooks.example.com/x",        // not https
		"https://user:pw@hooks.example.com", // credentials
		"https://127.0.0.1/x", "https://localhost.invalid/x", "https://[::1]/x",
		"https://10.1.2.3/x", "https://192.168.1.1/x", "https://172.16.0.1/x",
		"https://169.254.169.254/latest/meta-data", "https://[fd00:ec2::254]/x",
		"https://0.0.0.0/x", "https://[::]/x", "https://224.0.0.1/x", "https://100.64.0.1/x",
		"https://2130706433/x", "https://0177.0.0.1/x", "https://0x7f.0.0.1/x", "https://017700000001/x",
		"https://[::ffff:127.0.0.1]/x", "https://[::ffff:a9fe:a9fe]/x",
		"https://internal.example/x", "https://mixed.example/x", "https://metadata.example/x",
		"https://v6mapped.example/x", "https://uniquelocal.example/x",
		"/relative", "https://",
	} {
		_, err := g.CheckURL(ctx, bad)
		if err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
	// Rebinding: the name passed the check when saved, then resolves to
	// loopback; the dialer checks what it dials. Its context is cancelled,
	// so that a dialer that failed to refuse would send nothing.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := g.CheckURL(ctx, "https://rebind.example/x")
	is.NoErr(err)
	_, err = g.DialContext(cancelled, "tcp", "rebind.example:443")
	is.True(errors.Is(err, webhooks.ErrForbiddenAddress))
	// The dialer refuses a private address given directly too.
	_, err = g.DialContext(cancelled, "tcp", "127.0.0.1:443")
	is.True(errors.Is(err, webhooks.ErrForbiddenAddress))
	_, err = g.DialContext(cancelled, "tcp", "[::ffff:169.254.169.254]:80")
	is.True(errors.Is(err, webhooks.ErrForbiddenAddress))
	// An allow-list (tests, --webhooks-allow-private) opens a range.
	open := webhooks.Guard{Resolver: dns, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	_, err = open.CheckURL(ctx, "https://127.0.0.1:8443/x")
	is.NoErr(err)
	_, err = open.CheckURL(ctx, "https://10.1.2.3/x")
	is.True(err != nil)
}

// registryRow is one entry of an IANA special-purpose address registry,
// written here from the registry itself (not from the code's table), with
// what a delivery may do with it.
type registryRow struct {
	prefix string
	name   string
	rfc    string
	// verdict: "global" (dialable), "refused", or "embeds" (decided by the
	// IPv4 addresses the IPv6 address carries; see TestDialableEmbeddedIPv4).
	verdict string
}

// ipv4Registry is every entry of the IANA IPv4 Special-Purpose Address
// Registry, plus multicast (RFC 5771), which has its own registry.
var ipv4Registry = []registryRow{
	{"0.0.0.0/8", `"This network"`, "RFC 791, section 3.2", "refused"},
	{"0.0.0.0/32", `"This host on this network"`, "RFC 1122, section 3.2.1.3", "refused"},
	{"10.0.0.0/8", "Private-Use", "RFC 1918", "refused"},
	{"100.64.0.0/10", "Shared Address Space", "RFC 6598", "refused"},
	{"127.0.0.0/8", "Loopback", "RFC 1122, section 3.2.1.3", "refused"},
	{"169.254.0.0/16", "Link Local", "RFC 3927", "refused"},
	{"172.16.0.0/12", "Private-Use", "RFC 1918", "refused"},
	{"192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890, section 2.1", "refused"},
	{"192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", "refused"},
	{"192.0.0.8/32", "IPv4 dummy address", "RFC 7600", "refused"},
	{"192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", "global"},
	{"192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", "global"},
	{"192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050", "refused"},
	{"192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050", "refused"},
	{"192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", "refused"},
	{"192.31.196.0/24", "AS112-v4", "RFC 7535", "global"},
	{"192.52.193.0/24", "AMT", "RFC 7450", "global"},
	{"192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", "refused"},
	{"192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", "refused"},
	{"192.168.0.0/16", "Private-Use", "RFC 1918", "refused"},
	{"192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", "global"},
	{"198.18.0.0/15", "Benchmarking", "RFC 2544", "refused"},
	{"198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", "refused"},
	{"203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", "refused"},
	{"240.0.0.0/4", "Reserved", "RFC 1112, section 4", "refused"},
	{"255.255.255.255/32", "Limited Broadcast", "RFC 8190, RFC 919, section 7", "refused"},
	{"224.0.0.0/4", "Multicast (IPv4 Multicast Address Space Registry)", "RFC 5771", "refused"},
}

// ipv6Registry is every entry of the IANA IPv6 Special-Purpose Address
// Registry, plus the deprecated forms that carry an IPv4 address,
// site-local and multicast.
var ipv6Registry = []registryRow{
	{"::1/128", "Loopback Address", "RFC 4291", "refused"},
	{"::/128", "Unspecified Address", "RFC 4291", "refused"},
	{"::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", "embeds"},
	{"64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", "embeds"},
	{"64:ff9b:1::/48", "IPv4-IPv6 Translat. (local use)", "RFC 8215", "refused"},
	{"100::/64", "Discard-Only Address Block", "RFC 6666", "refused"},
	{"100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", "refused"},
	{"2001::/23", "IETF Protocol Assignments", "RFC 2928", "refused"},
	{"2001::/32", "TEREDO", "RFC 4380, RFC 8190", "embeds"},
	{"2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", "global"},
	{"2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", "global"},
	{"2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", "global"},
	{"2001:2::/48", "Benchmarking", "RFC 5180, RFC Errata 1752", "refused"},
	{"2001:3::/32", "AMT", "RFC 7450", "global"},
	{"2001:4:112::/48", "AS112-v6", "RFC 7535", "global"},
	{"2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", "refused"},
	{"2001:20::/28", "ORCHIDv2", "RFC 7343", "global"},
	{"2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", "global"},
	{"2001:db8::/32", "Documentation", "RFC 3849", "refused"},
	{"2002::/16", "6to4", "RFC 3056", "embeds"},
	{"2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", "global"},
	{"3fff::/20", "Documentation", "RFC 9637", "refused"},
	{"5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", "refused"},
	{"fc00::/7", "Unique-Local", "RFC 4193, RFC 8190", "refused"},
	{"fe80::/10", "Link-Local Unicast", "RFC 4291", "refused"},
	// Beyond the registry.
	{"::/96", "IPv4-compatible (deprecated)", "RFC 4291, section 2.5.5.1", "refused"},
	{"::ffff:0:0:0/96", "IPv4-translated", "RFC 2765, section 2.1", "refused"},
	{"fec0::/10", "Site-local (deprecated)", "RFC 3879", "refused"},
	{"ff00::/8", "Multicast", "RFC 4291", "refused"},
	{"4000::/3", "outside global unicast (IANA IPv6 Address Space)", "RFC 4291", "refused"},
}

// lastOf is the last address of p.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// TestDialableRegistries: every special-purpose range of the IANA
// registries is dialable exactly when the registry calls it globally
// reachable, at its first address and its last.
func TestDialableRegistries(t *testing.T) {
	for _, row := range append(append([]registryRow{}, ipv4Registry...), ipv6Registry...) {
		p := netip.MustParsePrefix(row.prefix)
		for _, a := range []netip.Addr{p.Addr(), lastOf(p)} {
			err := webhooks.Dialable(a)
			switch row.verdict {
			case "global":
				if err != nil {
					t.Errorf("%s (%s, %s): %s refused: %v", row.prefix, row.name, row.rfc, a, err)
				}
			case "refused":
				if !errors.Is(err, webhooks.ErrForbiddenAddress) {
					t.Errorf("%s (%s, %s): %s not refused (%v)", row.prefix, row.name, row.rfc, a, err)
				}
			}
		}
	}
	// A refusal names the range and its RFC.
	err := webhooks.Dialable(netip.MustParseAddr("100.64.1.2"))
	if err == nil || !strings.Contains(err.Error(), "100.64.0.0/10") || !strings.Contains(err.Error(), "RFC 6598") {
		t.Errorf("the refusal does not name the range: %v", err)
	}
	for _, ok := range []string{"93.184.216.34", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001:80b::200e"} {
		if err := webhooks.Dialable(netip.MustParseAddr(ok)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"fe80::1%eth0", "2606:4700::1111%eth0"} {
		if err := webhooks.Dialable(netip.MustParseAddr(bad)); err == nil {
			t.Errorf("%s (with a zone) accepted", bad)
		}
	}
	if webhooks.Dialable(netip.Addr{}) == nil {
		t.Error("the zero address accepted")
	}
}

// embeddings are the IPv6 forms that carry an IPv4 address, with whether
// the form is dialable at all when the IPv4 address is.
var embeddings = []struct {
	form    string
	carry   func(v4 [4]byte) string
	usable  bool // dialable when the IPv4 address is
	comment string
}{
	{"IPv4-compatible", func(b [4]byte) string { return fmt.Sprintf("::%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }, false, "::/96 is deprecated"},
	{"IPv4-compatible, hex", func(b [4]byte) string {
		return fmt.Sprintf("::%x:%x", uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3]))
	}, false, ""},
	{"IPv4-mapped", func(b [4]byte) string { return fmt.Sprintf("::ffff:%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }, true, "the system dials the IPv4 address"},
	{"IPv4-translated", func(b [4]byte) string { return fmt.Sprintf("::ffff:0:%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }, false, ""},
	{"6to4", func(b [4]byte) string { return fmt.Sprintf("2002:%02x%02x:%02x%02x::1", b[0], b[1], b[2], b[3]) }, true, ""},
	{"NAT64 well-known", func(b [4]byte) string { return fmt.Sprintf("64:ff9b::%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }, true, ""},
	{"NAT64 local-use", func(b [4]byte) string { // RFC 6052 for a /48: bits 48-63, then 72-87
		return fmt.Sprintf("64:ff9b:1:%02x%02x:%02x:%02x00::", b[0], b[1], b[2], b[3])
	}, false, "64:ff9b:1::/48 is not global"},
	{"Teredo client", func(b [4]byte) string { // server 65.54.227.120, client obfuscated
		return fmt.Sprintf("2001:0:4136:e378:8000:63bf:%02x%02x:%02x%02x", ^b[0], ^b[1], ^b[2], ^b[3])
	}, true, ""},
	{"Teredo server", func(b [4]byte) string { // client 93.184.216.34, obfuscated
		return fmt.Sprintf("2001:0:%02x%02x:%02x%02x:8000:63bf:a247:27dd", b[0], b[1], b[2], b[3])
	}, true, ""},
}

// TestDialableEmbeddedIPv4: an IPv6 address that carries an IPv4 address
// that is not global is refused in every form; one that carries a global
// address is dialable only in the forms that reach it.
func TestDialableEmbeddedIPv4(t *testing.T) {
	for _, row := range ipv4Registry {
		if row.verdict != "refused" {
			continue
		}
		p := netip.MustParsePrefix(row.prefix)
		for _, v4 := range []netip.Addr{p.Addr(), lastOf(p)} {
			for _, e := range embeddings {
				a := netip.MustParseAddr(e.carry(v4.As4()))
				if err := webhooks.Dialable(a); !errors.Is(err, webhooks.ErrForbiddenAddress) {
					t.Errorf("%s %s carries %s (%s, %s) and was not refused", e.form, a, v4, row.name, row.rfc)
				}
			}
		}
	}
	public := netip.MustParseAddr("93.184.216.34").As4()
	for _, e := range embeddings {
		a := netip.MustParseAddr(e.carry(public))
		err := webhooks.Dialable(a)
		if e.usable && err != nil {
			t.Errorf("%s %s carries a public address and was refused: %v", e.form, a, err)
		}
		if !e.usable && err == nil {
			t.Errorf("%s %s was accepted (%s)", e.form, a, e.comment)
		}
	}
	// The probe's examples, and a refusal that names what is carried.
	for _, bad := range []string{"::127.0.0.1", "::7f00:1", "::ffff:10.0.0.1", "2002:7f00:1::", "2002:a00:1::1",
		"64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b:1::a00:1", "64:ff9b:1:7f00:0:100::", "::ffff:0:a00:1",
		"2001:0:4136:e378:8000:63bf:80ff:fffe" /* client 127.0.0.1 */} {
		if err := webhooks.Dialable(netip.MustParseAddr(bad)); !errors.Is(err, webhooks.ErrForbiddenAddress) {
			t.Errorf("%s accepted", bad)
		}
	}
	err := webhooks.Dialable(netip.MustParseAddr("2002:7f00:1::"))
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "127.0.0.0/8") {
		t.Errorf("the refusal does not name the address carried: %v", err)
	}
}

// TestSSRFEmbeddedForms: the URL check and the dialler refuse literal IPv6
// hosts that carry a private address, before any traffic.
func TestSSRFEmbeddedForms(t *testing.T) {
	ctx := context.Background()
	// The dialler gets a cancelled context: it refuses before it dials,
	// and were it not to refuse, it would fail without sending a packet.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	dns := &fakeDNS{answers: map[string][][]netip.Addr{
		"six-to-four.example": {addrs("2002:a9fe:a9fe::1")},
		"nat64.example":       {addrs("93.184.216.34"), addrs("64:ff9b::a9fe:a9fe")},
	}}
	// Loopback allowed, as in tests and behind --webhooks-allow-private on
	// a development machine: still no IPv6 form of it passes.
	g := webhooks.Guard{Resolver: dns, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	for _, host := range []string{"[::127.0.0.1]", "[::7f00:1]", "[::ffff:10.0.0.1]", "[::ffff:0:7f00:1]", "[2002:7f00:1::]",
		"[64:ff9b::a00:1]", "[64:ff9b:1::7f00:1]", "[2001:0:4136:e378:8000:63bf:80ff:fffe]", "[2001:0:7f00:1:8000:63bf:a247:27dd]",
		"[fe80::1%25eth0]", "[100::1]", "[3fff::1]", "six-to-four.example"} {
		if _, err := g.CheckURL(ctx, "https://"+host+"/x"); err == nil {
			t.Errorf("https://%s/x was accepted", host)
		}
		if _, err := g.DialContext(cancelled, "tcp", host+":443"); !errors.Is(err, webhooks.ErrForbiddenAddress) {
			t.Errorf("dialling %s was not refused: %v", host, err)
		}
	}
	// A literal address is refused with its range; a name without saying
	// where it points.
	_, err := g.CheckURL(ctx, "https://[::7f00:1]/x")
	if err == nil || !strings.Contains(err.Error(), "::/96") {
		t.Errorf("the refusal does not name the range: %v", err)
	}
	_, err = g.CheckURL(ctx, "https://six-to-four.example/x")
	if err == nil || strings.Contains(err.Error(), "169.254") || strings.Contains(err.Error(), "2002:") {
		t.Errorf("the refusal of a name tells where it points: %v", err)
	}
	// Rebinding to an embedded form is refused at dial time.
	_, err = g.CheckURL(ctx, "https://nat64.example/x")
	is.New(t).NoErr(err)
	_, err = g.DialContext(cancelled, "tcp", "nat64.example:443")
	is.New(t).True(errors.Is(err, webhooks.ErrForbiddenAddress))
	_, err = g.CheckURL(ctx, "https://127.0.0.1:8443/x")
	is.New(t).NoErr(err) // the allowance itself still holds
}
