package email

import (
	"context"
	"fmt"
	"strings"

	"github.com/emersion/go-imap/v2"

	"github.com/leadline/leadline/senders"
)

var _ senders.Checker = (*Transport)(nil)

// Check connects to the sender's SMTP server (greeting, TLS, AUTH) and
// its IMAP server (login, the inbox and sent folders it will use), and
// says what works and what to fix.
func (t *Transport) Check(ctx context.Context, s *senders.Sender) []senders.CheckStep {
	var out []senders.CheckStep
	add := func(what string, err error, ok string) bool {
		if err != nil {
			detail := err.Error()
			if te, is := senders.AsTransportError(err); is {
				detail = te.Message
			}
			out = append(out, senders.CheckStep{What: what, Detail: detail})
			return false
		}
		out = append(out, senders.CheckStep{What: what, OK: true, Detail: ok})
		return true
	}
	b := &box{}
	defer b.close()
	if m := smtpOf(s); m != nil {
		err := t.smtpConn(ctx, b, s)
		step := "smtp " + addr(m)
		if te, ok := senders.AsTransportError(err); ok && te.Code == CodeAuthFailed {
			out = append(out, senders.CheckStep{What: step + " greeting and " + security(m), OK: true, Detail: "the server answered"})
			add(step+" AUTH as "+m.Username, err, "")
		} else if add(step+" greeting and "+security(m), err, "the server answered") {
			add(step+" AUTH as "+m.Username, nil, "signed in")
		}
	}
	if m := imapOf(s); m != nil {
		c, err := dialIMAP(ctx, t.keys(), t.cfg.Logger, s, nil)
		if !add("imap "+addr(m)+" login as "+m.Username, err, "signed in ("+security(m)+")") {
			return out
		}
		b.imap = c
		inbox := "INBOX"
		if m.Inbox != "" {
			inbox = m.Inbox
		}
		for _, f := range []struct{ role, name string }{{"inbox (replies are read here)", inbox}, {"sent folder (copies are kept here)", sentFolder(s)}} {
			st, err := c.Status(f.name, &imap.StatusOptions{NumMessages: true}).Wait()
			if err != nil {
				err = fmt.Errorf("folder %q cannot be opened (%v); set imap.%s to an existing folder (Gmail: \"[Gmail]/Sent Mail\")", f.name, err,
					map[bool]string{true: "inbox", false: "sent"}[strings.HasPrefix(f.role, "inbox")])
			}
			n := ""
			if st != nil && st.NumMessages != nil {
				n = fmt.Sprintf("%d messages", *st.NumMessages)
			}
			add("imap "+f.role+" "+f.name, err, n)
		}
		if !c.Caps().Has(imap.CapIdle) {
			out = append(out, senders.CheckStep{What: "imap IDLE", OK: true, Detail: "not offered: replies are polled"})
		}
	}
	return out
}

func security(m *Server) string {
	switch m.Security {
	case "tls":
		return "TLS"
	case "starttls":
		return "STARTTLS"
	}
	return "no TLS"
}
