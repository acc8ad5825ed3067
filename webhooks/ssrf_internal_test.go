package webhooks

import (
	"errors"
	"net/netip"
	"testing"
)

// TestDialerControl: the dialler's last check, on the address the socket
// is about to connect to, applies the same rule as the URL check, and the
// allowance.
func TestDialerControl(t *testing.T) {
	g := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	for _, bad := range []string{"[::7f00:1]:443", "[::ffff:10.0.0.1]:443", "[2002:7f00:1::]:443", "[64:ff9b::a00:1]:443",
		"10.0.0.1:443", "[fd00:ec2::254]:80", "not-an-address:443"} {
		if err := g.control("tcp6", bad, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	for _, ok := range []string{"127.0.0.1:8443", "[::ffff:127.0.0.1]:8443", "93.184.216.34:443", "[2606:4700::1111]:443"} {
		if err := g.control("tcp", ok, nil); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
