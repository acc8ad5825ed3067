package webhooks

import (
	"fmt"
	"net/netip"
)

// special is a range of addresses with a special purpose: an entry of the
// IANA IPv4 or IPv6 Special-Purpose Address Registry, or one of the few
// ranges those registries leave to other documents (multicast, the
// deprecated IPv4-compatible, IPv4-translated and site-local forms).
type special struct {
	prefix netip.Prefix
	name   string
	rfc    string
	// global is the registry's "Globally Reachable": only a global
	// range may be dialled. A range whose reachability the registry does
	// not state (N/A) is not global unless it embeds an IPv4 address.
	global bool
	// embedded finds the IPv4 addresses an address of the range carries
	// (NAT64, 6to4, Teredo): each must be dialable too, since a packet to
	// the IPv6 address ends up at them.
	embedded func(a [16]byte) []netip.Addr
}

func sp(prefix, name, rfc string, global bool) special {
	return special{prefix: netip.MustParsePrefix(prefix), name: name, rfc: rfc, global: global}
}

// last32 is the IPv4 address in an address's last 32 bits (NAT64's
// well-known prefix, RFC 6052).
func last32(a [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte(a[12:16]))}
}

// sixToFour is the IPv4 address in bits 16 to 47 of a 6to4 address
// (RFC 3056).
func sixToFour(a [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte(a[2:6]))}
}

// teredo is the Teredo server's IPv4 address (bits 32 to 63) and the
// client's, stored with every bit inverted in the last 32 bits (RFC 4380).
func teredo(a [16]byte) []netip.Addr {
	client := [4]byte{^a[12], ^a[13], ^a[14], ^a[15]}
	return []netip.Addr{netip.AddrFrom4([4]byte(a[4:8])), netip.AddrFrom4(client)}
}

// specialV4 is the IANA IPv4 Special-Purpose Address Registry, plus
// multicast, which the registry leaves to its own.
var specialV4 = []special{
	sp("0.0.0.0/8", `"this network"`, "RFC 791", false),
	sp("0.0.0.0/32", `"this host on this network"`, "RFC 1122", false),
	sp("10.0.0.0/8", "private use", "RFC 1918", false),
	sp("100.64.0.0/10", "shared address space (carrier-grade NAT)", "RFC 6598", false),
	sp("127.0.0.0/8", "loopback", "RFC 1122", false),
	sp("169.254.0.0/16", "link local", "RFC 3927", false),
	sp("172.16.0.0/12", "private use", "RFC 1918", false),
	sp("192.0.0.0/24", "IETF protocol assignments", "RFC 6890", false),
	sp("192.0.0.0/29", "IPv4 service continuity prefix", "RFC 7335", false),
	sp("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", false),
	sp("192.0.0.9/32", "Port Control Protocol anycast", "RFC 7723", true),
	sp("192.0.0.10/32", "TURN anycast", "RFC 8155", true),
	sp("192.0.0.170/32", "NAT64/DNS64 discovery", "RFC 8880", false),
	sp("192.0.0.171/32", "NAT64/DNS64 discovery", "RFC 8880", false),
	sp("192.0.2.0/24", "documentation (TEST-NET-1)", "RFC 5737", false),
	sp("192.31.196.0/24", "AS112-v4", "RFC 7535", true),
	sp("192.52.193.0/24", "AMT", "RFC 7450", true),
	sp("192.88.99.0/24", "deprecated 6to4 relay anycast", "RFC 7526", false),
	sp("192.88.99.2/32", "6a44 relay anycast", "RFC 6751", false),
	sp("192.168.0.0/16", "private use", "RFC 1918", false),
	sp("192.175.48.0/24", "AS112 direct delegation", "RFC 7534", true),
	sp("198.18.0.0/15", "benchmarking", "RFC 2544", false),
	sp("198.51.100.0/24", "documentation (TEST-NET-2)", "RFC 5737", false),
	sp("203.0.113.0/24", "documentation (TEST-NET-3)", "RFC 5737", false),
	sp("224.0.0.0/4", "multicast", "RFC 5771", false),
	sp("240.0.0.0/4", "reserved", "RFC 1112", false),
	sp("255.255.255.255/32", "limited broadcast", "RFC 919", false),
}

// specialV6 is the IANA IPv6 Special-Purpose Address Registry, plus the
// deprecated forms that embed an IPv4 address, site-local and multicast.
// IPv4-mapped addresses (::ffff:0:0/96) are not here: Dialable decides
// them as the IPv4 address they are, which is what the system dials.
var specialV6 = []special{
	sp("::/128", "unspecified", "RFC 4291", false),
	sp("::1/128", "loopback", "RFC 4291", false),
	sp("::/96", "IPv4-compatible (deprecated)", "RFC 4291", false),
	sp("::ffff:0:0:0/96", "IPv4-translated", "RFC 2765", false),
	{prefix: netip.MustParsePrefix("64:ff9b::/96"), name: "NAT64 well-known prefix", rfc: "RFC 6052", global: true, embedded: last32},
	sp("64:ff9b:1::/48", "NAT64 local-use prefix", "RFC 8215", false),
	sp("100::/64", "discard-only", "RFC 6666", false),
	sp("100:0:0:1::/64", "dummy IPv6 prefix", "RFC 9780", false),
	sp("2001::/23", "IETF protocol assignments", "RFC 2928", false),
	{prefix: netip.MustParsePrefix("2001::/32"), name: "Teredo", rfc: "RFC 4380", global: true, embedded: teredo},
	sp("2001:1::1/128", "Port Control Protocol anycast", "RFC 7723", true),
	sp("2001:1::2/128", "TURN anycast", "RFC 8155", true),
	sp("2001:1::3/128", "DNS-SD service registration protocol anycast", "RFC 9665", true),
	sp("2001:2::/48", "benchmarking", "RFC 5180", false),
	sp("2001:3::/32", "AMT", "RFC 7450", true),
	sp("2001:4:112::/48", "AS112-v6", "RFC 7535", true),
	sp("2001:10::/28", "deprecated ORCHID", "RFC 4843", false),
	sp("2001:20::/28", "ORCHIDv2", "RFC 7343", true),
	sp("2001:30::/28", "drone remote ID entity tags", "RFC 9374", true),
	sp("2001:db8::/32", "documentation", "RFC 3849", false),
	{prefix: netip.MustParsePrefix("2002::/16"), name: "6to4", rfc: "RFC 3056", global: true, embedded: sixToFour},
	sp("2620:4f:8000::/48", "AS112 direct delegation", "RFC 7534", true),
	sp("3fff::/20", "documentation", "RFC 9637", false),
	sp("5f00::/16", "segment routing (SRv6) SIDs", "RFC 9602", false),
	sp("fc00::/7", "unique local", "RFC 4193", false),
	sp("fe80::/10", "link-local unicast", "RFC 4291", false),
	sp("fec0::/10", "site-local (deprecated)", "RFC 3879", false),
	sp("ff00::/8", "multicast", "RFC 4291", false),
}

// globalUnicast is the only part of the IPv6 space allocated for global
// unicast (IANA IPv6 Address Space): an address outside it is dialable
// only through a global entry of specialV6, and the only such entry is
// NAT64's well-known prefix.
var globalUnicast = special{prefix: netip.MustParsePrefix("2000::/3"), name: "global unicast", rfc: "RFC 4291"}

// rangeOf is the most specific special range holding a, if any.
func rangeOf(a netip.Addr) (special, bool) {
	table := specialV4
	if a.Is6() {
		table = specialV6
	}
	var best special
	found := false
	for _, s := range table {
		if s.prefix.Contains(a) && (!found || s.prefix.Bits() > best.prefix.Bits()) {
			best, found = s, true
		}
	}
	return best, found
}

// Dialable decides whether a webhook delivery may connect to addr: nil
// when the address is globally reachable, otherwise an error wrapping
// ErrForbiddenAddress that names the range refusing it. It is the one
// rule both the check of a URL when it is saved and the dialler apply.
//
// An address in a range of the IANA special-purpose registries is
// dialable only when the registry calls the range globally reachable. An
// IPv4-mapped address is decided as its IPv4 address; an IPv6 address
// that carries an IPv4 address (NAT64, 6to4, Teredo's server and client)
// is dialable only when every IPv4 address it carries is. Outside
// 2000::/3 no IPv6 address is dialable but through a global special
// range. An address with a zone is never dialable: a zone names a local
// link.
func Dialable(addr netip.Addr) error {
	if !addr.IsValid() {
		return fmt.Errorf("%w: no address", ErrForbiddenAddress)
	}
	if addr.Zone() != "" {
		return fmt.Errorf("%w: %s names a local interface", ErrForbiddenAddress, addr)
	}
	a := addr.Unmap()
	s, ok := rangeOf(a)
	if !ok {
		if a.Is4() || globalUnicast.prefix.Contains(a) {
			return nil
		}
		return fmt.Errorf("%w: %s is outside %s, the only IPv6 range for %s (%s)", ErrForbiddenAddress,
			addr, globalUnicast.prefix, globalUnicast.name, globalUnicast.rfc)
	}
	if !s.global {
		return refusal(addr, s)
	}
	if s.embedded != nil {
		for _, v4 := range s.embedded(a.As16()) {
			if inner, ok := rangeOf(v4); ok && !inner.global {
				return fmt.Errorf("%w: %s (%s) carries %s, which is in %s (%s, %s)", ErrForbiddenAddress,
					addr, s.name, v4, inner.prefix, inner.name, inner.rfc)
			}
		}
	}
	return nil
}

func refusal(addr netip.Addr, s special) error {
	return fmt.Errorf("%w: %s is in %s (%s, %s)", ErrForbiddenAddress, addr, s.prefix, s.name, s.rfc)
}
