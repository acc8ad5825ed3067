package webhooks_test

import (
	"context"
	"errors"
	"net/netip"
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
	// loopback; the dialer checks what it dials.
	_, err := g.CheckURL(ctx, "https://rebind.example/x")
	is.NoErr(err)
	_, err = g.DialContext(ctx, "tcp", "rebind.example:443")
	is.True(errors.Is(err, webhooks.ErrForbiddenAddress))
	// The dialer refuses a private address given directly too.
	_, err = g.DialContext(ctx, "tcp", "127.0.0.1:443")
	is.True(errors.Is(err, webhooks.ErrForbiddenAddress))
	_, err = g.DialContext(ctx, "tcp", "[::ffff:169.254.169.254]:80")
	is.True(errors.Is(err, webhooks.ErrForbiddenAddress))
	// An allow-list (tests, --webhooks-allow-private) opens a range.
	open := webhooks.Guard{Resolver: dns, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	_, err = open.CheckURL(ctx, "https://127.0.0.1:8443/x")
	is.NoErr(err)
	_, err = open.CheckURL(ctx, "https://10.1.2.3/x")
	is.True(err != nil)
}
