package webhooks

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Resolver finds the addresses of a host name.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which endpoints deliveries may reach. The zero Guard uses
// the system resolver and refuses every address Dialable refuses.
type Guard struct {
	Resolver Resolver
	// Allow are addresses allowed although not public: only tests and
	// `--webhooks-allow-private` set them.
	Allow []netip.Prefix
}

// ErrForbiddenAddress is a target that resolves to an address deliveries
// may not reach. Every refusal of an address wraps it.
var ErrForbiddenAddress = errors.New("webhooks: the endpoint resolves to an address that is not public")

// permit decides whether a delivery may reach addr: an address in one of
// g.Allow's prefixes may, whatever it is; any other must be Dialable.
func (g Guard) permit(addr netip.Addr) error {
	a := addr.Unmap()
	for _, p := range g.Allow {
		if p.Contains(a) {
			return nil
		}
	}
	return Dialable(addr)
}

func (g Guard) resolver() Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// resolve returns the host's addresses, all of them permitted, or an
// error. A literal address is refused with the range it is in; a name that
// resolves to a refused address is refused without saying which, so that
// the answer does not tell a client what names mean inside the server's
// network.
func (g Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if err := g.permit(a); err != nil {
			return nil, err
		}
		return []netip.Addr{a}, nil
	}
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("webhooks: cannot resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("webhooks: %s has no address", host)
	}
	for _, a := range addrs {
		if g.permit(a) != nil {
			return nil, ErrForbiddenAddress
		}
	}
	return addrs, nil
}

// CheckURL checks an endpoint when it is saved: https, a host name or a
// plain IP address (no decimal, octal or hex forms), no credentials, and
// every address it resolves to dialable (see Dialable).
func (g Guard) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the url is not an absolute URL")
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("the url must use https, not %q", u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("the url must not carry credentials")
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err != nil && numericHost(host) {
		return nil, fmt.Errorf("the host %q is an IP address in a form other than dotted decimal", host)
	}
	if _, err := g.resolve(ctx, host); err != nil {
		return nil, err
	}
	return u, nil
}

// numericHost reports a host made only of digits, dots and x (decimal,
// octal or hex forms of an IPv4 address, such as 2130706433 or 0177.1).
func numericHost(h string) bool {
	h = strings.ToLower(h)
	if h == "" {
		return false
	}
	for _, r := range h {
		if (r < '0' || r > '9') && r != '.' && r != 'x' && (r < 'a' || r > 'f') {
			return false
		}
	}
	// Hex letters alone make a name such as "cafe.de"... only when a part
	// starts with a digit is it numeric.
	for _, part := range strings.Split(h, ".") {
		if part != "" && (part[0] < '0' || part[0] > '9') {
			return false
		}
	}
	return true
}

// DialContext resolves addr's host, refuses it unless every address is
// permitted, and dials the address it checked: a DNS answer that changes
// between the check and the dial (rebinding) cannot reach a private
// address. The dialer checks again, with the same rule, the address the
// socket is about to connect to, so that no path to a connection skips
// the check.
func (g Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Control: g.control}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// control refuses a connection to an address that is not permitted, just
// before the socket connects.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an address", ErrForbiddenAddress, address)
	}
	return g.permit(ap.Addr())
}

// Client returns the HTTP client deliveries use: the guarded dialer, no
// proxy, no redirects followed, and a 10-second limit per request. tlsc
// (nil for the system's) lets tests trust a local receiver.
func (g Guard) Client(tlsc *tls.Config) *http.Client {
	if tlsc != nil {
		tlsc = tlsc.Clone() // the transport sets its protocols on it
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         g.DialContext,
		TLSClientConfig:     tlsc,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
