package email

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/leadline/leadline/senders"
)

// MessageID returns the Message-ID (without angle brackets) of the email
// sent under an action's idempotency key from address: the same action
// always has the same id, so that Lookup finds it in the sent folder.
func MessageID(key, address string) string {
	sum := sha256.Sum256([]byte(key))
	local := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:20]))
	domain := "leadline.invalid"
	if _, d, ok := strings.Cut(address, "@"); ok && d != "" {
		domain = d
	}
	return local + "@" + domain
}

// bracket returns a message id as headers carry it.
func bracket(id string) string { return "<" + strings.Trim(id, "<> ") + ">" }

// letter is an email ready to send: the message and its raw form, which is
// what the sent folder keeps.
type letter struct {
	msg *mail.Msg
	id  string // Message-ID, without brackets
	raw []byte
}

// compose builds the email for req: From with the sender's display name,
// Date, the Message-ID of its key, In-Reply-To and References when it
// continues a thread ("Re: " and the first subject when the step has none
// of its own), and the one-click List-Unsubscribe headers (RFC 8058).
func (t *Transport) compose(req senders.Request, at time.Time) (*letter, error) {
	s := req.Sender
	from := ""
	if s.Address != nil {
		from = *s.Address
	}
	if from == "" {
		return nil, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeConnectionFailed, Signal: CodeConnectionFailed,
			Message: "the sender has no address: set address in the setup file"}
	}
	if req.Lead.Email == "" {
		return nil, &senders.TransportError{Kind: senders.Permanent, Code: "missing_email", Message: "the lead has no email address"}
	}
	m := mail.NewMsg(mail.WithNoDefaultUserAgent())
	name := ""
	if smtpOf(s) != nil {
		name = smtpOf(s).DisplayName
	}
	if err := m.FromFormat(name, from); err != nil {
		return nil, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeConnectionFailed, Signal: CodeConnectionFailed,
			Message: fmt.Sprintf("the sender's address %q is not an email address", from)}
	}
	if err := m.AddToFormat(req.Lead.Name, req.Lead.Email); err != nil {
		return nil, &senders.TransportError{Kind: senders.Permanent, Code: senders.CodeBounced,
			Message: fmt.Sprintf("the lead's address %q is not an email address", req.Lead.Email)}
	}
	id := MessageID(req.Key, from)
	m.SetMessageIDWithValue(id)
	m.SetDateWithValue(at)
	subject := req.Subject
	if n := len(req.Thread.Earlier); n > 0 {
		refs := make([]string, 0, n)
		for _, e := range req.Thread.Earlier {
			refs = append(refs, bracket(e))
		}
		m.SetGenHeaderPreformatted(mail.HeaderInReplyTo, refs[n-1])
		m.SetGenHeaderPreformatted(mail.HeaderReferences, strings.Join(refs, " "))
		if subject == "" && req.Thread.Subject != "" {
			subject = "Re: " + strings.TrimSpace(strings.TrimPrefix(req.Thread.Subject, "Re: "))
		}
	}
	m.Subject(subject)
	if link := t.unsubscribeLink(req); link != "" {
		m.SetGenHeaderPreformatted(mail.HeaderListUnsubscribe, link)
		if strings.HasPrefix(link, "<http") {
			m.SetGenHeaderPreformatted(mail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
		}
	}
	m.SetBodyString(mail.TypeTextPlain, req.Body)
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		return nil, &senders.TransportError{Kind: senders.Permanent, Code: "message_invalid", Message: err.Error()}
	}
	return &letter{msg: m, id: id, raw: buf.Bytes()}, nil
}

// unsubscribeLink is the List-Unsubscribe value: the one-click link on the
// public URL, or without one a mailto: of the sender's address (a reply
// whose subject is "unsubscribe" suppresses the lead).
func (t *Transport) unsubscribeLink(req senders.Request) string {
	if req.Purpose == senders.PurposeReply {
		return "" // a member's reply in a conversation is no campaign mail
	}
	if t.cfg.PublicURL != "" && t.cfg.Token != nil && req.Lead.LeadID != "" {
		token, err := t.cfg.Token(req.Sender.WorkspaceID, req.Lead.LeadID)
		if err == nil {
			return "<" + strings.TrimSuffix(t.cfg.PublicURL, "/") + "/unsubscribe/" + url.PathEscape(token) + ">"
		}
		t.cfg.Logger.Warn("email: no unsubscribe token; the link falls back to mailto", "error", err)
	}
	return "<mailto:" + *req.Sender.Address + "?subject=unsubscribe>"
}
