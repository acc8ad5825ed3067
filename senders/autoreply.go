package senders

import "strings"

// AutoReplyHeaders are the headers by which a machine's answer is known
// (RFC 3834 and the common vendors'): what a transport passes on in
// Inbound.Headers.
var AutoReplyHeaders = []string{"Auto-Submitted", "X-Autoreply", "X-Autorespond", "X-Autoresponder", "X-Apple-Action", "Precedence"}

// MachineHeaders reports whether a message's headers (AutoReplyHeaders,
// names in any case) say a machine sent it.
func MachineHeaders(headers map[string]string) bool {
	for k, v := range headers {
		v = strings.ToLower(strings.TrimSpace(v))
		switch strings.ToLower(k) {
		case "auto-submitted":
			if v != "no" {
				return true
			}
		case "x-autoreply", "x-autorespond", "x-autoresponder":
			return true
		case "x-apple-action":
			if v == "vacation" {
				return true
			}
		case "precedence":
			if v == "auto_reply" || v == "bulk" || v == "junk" {
				return true
			}
		}
	}
	return false
}
