package email

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-message"
	// Every charset a mail client writes (ISO-8859-*, windows-125*,
	// Shift_JIS, …), decoded to UTF-8 in bodies and RFC 2047 headers.
	_ "github.com/emersion/go-message/charset"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"

	"github.com/leadline/leadline/senders"
)

// Parsed is what a message read from a mailbox says: who wrote it, what it
// answers, its text, and, for a delivery status notification, the report.
type Parsed struct {
	// MessageID is the message's own id, without angle brackets, as are
	// all the ids here.
	MessageID string
	// InReplyTo and References are the ids the message answers;
	// References newest first (the header lists them oldest first).
	InReplyTo  []string
	References []string
	// From is the address that wrote (lower case), FromName its name.
	From     string
	FromName string
	Subject  string
	Date     time.Time // zero when the message has no readable date
	// Text is the message's text: its text/plain part, else its text/html
	// part as text, in UTF-8.
	Text string
	// Headers are the headers that say a machine wrote the message
	// (senders.AutoReplyHeaders: Auto-Submitted, X-Autoreply, Precedence, …).
	Headers map[string]string
	// AutoReply: those headers say a machine answered (RFC 3834).
	AutoReply bool
	// Report is the delivery status notification (RFC 3464) the message
	// carries; nil for any other message.
	Report *DeliveryReport
}

// DeliveryReport is a delivery status notification: how delivering an
// earlier message went, per recipient.
type DeliveryReport struct {
	// OriginalMessageID is the id of the message the report is about.
	OriginalMessageID string
	Recipients        []RecipientStatus
}

// RecipientStatus is one recipient's fields of a delivery status
// notification.
type RecipientStatus struct {
	Recipient  string // the final recipient's address
	Action     string // failed, delayed, delivered, relayed, expanded
	Status     string // e.g. 5.1.1
	Diagnostic string // the remote server's words, if given
}

// Failed reports whether delivery to the recipient failed for good: a
// 5.x.x status, or the action failed. A 4.x.x status is a delay.
func (r RecipientStatus) Failed() bool {
	if r.Action != "" {
		return strings.EqualFold(r.Action, "failed")
	}
	return strings.HasPrefix(r.Status, "5.")
}

// Failed returns the recipients whose delivery failed for good.
func (d *DeliveryReport) Failed() []RecipientStatus {
	var out []RecipientStatus
	for _, r := range d.Recipients {
		if r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// Parse reads a raw RFC 5322 message: any charset and transfer encoding.
// It fails only on a message whose header cannot be read.
func Parse(raw []byte) (Parsed, error) {
	e, err := message.Read(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
		return Parsed{}, fmt.Errorf("read message: %w", err)
	}
	h := gomail.Header{Header: e.Header}
	var p Parsed
	p.MessageID = firstID(h.Get("Message-Id"))
	p.InReplyTo = msgIDs(h.Get("In-Reply-To"))
	p.References = msgIDs(h.Get("References"))
	slices.Reverse(p.References)
	p.From, p.FromName = fromOf(h)
	if s, err := h.Subject(); err == nil {
		p.Subject = s
	} else {
		p.Subject = h.Get("Subject")
	}
	p.Subject = strings.TrimSpace(p.Subject)
	if d, err := h.Date(); err == nil {
		p.Date = d.UTC()
	}
	for _, k := range senders.AutoReplyHeaders {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			if p.Headers == nil {
				p.Headers = map[string]string{}
			}
			p.Headers[k] = v
		}
	}
	p.AutoReply = senders.MachineHeaders(p.Headers)

	mt, params, _ := e.Header.ContentType()
	if mt == "multipart/report" && strings.EqualFold(params["report-type"], "delivery-status") {
		rep, text, err := readReport(e)
		if err != nil {
			return Parsed{}, err
		}
		if rep.OriginalMessageID == "" {
			rep.OriginalMessageID = firstID(h.Get("X-Original-Message-Id"))
		}
		p.Report, p.Text = rep, text
		return p, nil
	}
	var plain, html string
	var found bool
	err = e.Walk(func(_ []int, part *message.Entity, err error) error {
		if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
			return err
		}
		if found || isAttachment(part) {
			return nil
		}
		t, _, _ := part.Header.ContentType()
		switch {
		case t == "text/plain" || t == "" && part == e:
			b, err := io.ReadAll(part.Body)
			if err != nil {
				return err
			}
			plain, found = string(b), true
		case t == "text/html" && html == "":
			b, err := io.ReadAll(part.Body)
			if err != nil {
				return err
			}
			html = htmlText(string(b))
		}
		return nil
	})
	if err != nil {
		return Parsed{}, fmt.Errorf("read message body: %w", err)
	}
	if found {
		p.Text = cleanText(plain)
	} else {
		p.Text = html
	}
	return p, nil
}

// isAttachment reports whether part is an attachment or a message inside
// the message, whose text is not the message's.
func isAttachment(part *message.Entity) bool {
	disp, _, _ := part.Header.ContentDisposition()
	t, _, _ := part.Header.ContentType()
	return disp == "attachment" || t == "message/rfc822"
}

// readReport reads a multipart/report of delivery status: the human
// readable part's text, the per-recipient fields and the original
// message's id.
func readReport(e *message.Entity) (*DeliveryReport, string, error) {
	rep := &DeliveryReport{}
	var text string
	mr := e.MultipartReader()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
			return nil, "", fmt.Errorf("read delivery report: %w", err)
		}
		t, _, _ := part.Header.ContentType()
		b, err := io.ReadAll(part.Body)
		if err != nil {
			return nil, "", fmt.Errorf("read delivery report: %w", err)
		}
		switch t {
		case "message/delivery-status", "message/global-delivery-status":
			envID, rcpts := statusFields(b)
			rep.Recipients = append(rep.Recipients, rcpts...)
			if rep.OriginalMessageID == "" {
				rep.OriginalMessageID = firstID(envID)
			}
		case "message/rfc822", "text/rfc822-headers", "message/global", "message/global-headers":
			h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(b)))
			if err == nil || h.Len() > 0 {
				if id := firstID(h.Get("Message-Id")); id != "" {
					rep.OriginalMessageID = id
				}
			}
		case "text/plain":
			if text == "" {
				text = cleanText(string(b))
			}
		}
	}
	return rep, text, nil
}

// statusFields reads the body of a message/delivery-status part: a block
// of per-message fields, then one block per recipient. It returns the
// Original-Envelope-Id and the recipients.
func statusFields(b []byte) (string, []RecipientStatus) {
	// Blocks are separated by blank lines; some servers end lines in LF.
	r := bufio.NewReader(bytes.NewReader(b))
	var envID string
	var out []RecipientStatus
	for first := true; ; first = false {
		h, err := textproto.ReadHeader(r)
		if h.Len() > 0 {
			if first {
				envID = h.Get("Original-Envelope-Id")
			}
			if rcpt := typed(h.Get("Final-Recipient")); rcpt != "" || h.Has("Status") {
				if rcpt == "" {
					rcpt = typed(h.Get("Original-Recipient"))
				}
				out = append(out, RecipientStatus{
					Recipient:  strings.ToLower(strings.Trim(rcpt, "<>")),
					Action:     strings.ToLower(strings.TrimSpace(h.Get("Action"))),
					Status:     statusCode(h.Get("Status")),
					Diagnostic: typed(h.Get("Diagnostic-Code")),
				})
			}
		}
		if err != nil {
			return envID, out
		}
		// Skip the blank lines between blocks.
		for {
			c, err := r.Peek(1)
			if err != nil {
				return envID, out
			}
			if c[0] != '\r' && c[0] != '\n' {
				break
			}
			_, _ = r.ReadByte()
		}
	}
}

// typed is a DSN field's value without its type ("rfc822; a@b" → "a@b",
// "smtp; 550 …" → "550 …"), its folding undone.
func typed(v string) string {
	if _, rest, ok := strings.Cut(v, ";"); ok {
		v = rest
	}
	return strings.Join(strings.Fields(v), " ")
}

// statusCode is the x.y.z code of a Status field ("5.1.1 (user unknown)"
// → "5.1.1").
func statusCode(v string) string {
	f := strings.Fields(v)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// fromOf is the From address (lower case) and name; a header that the
// strict parser refuses is read leniently.
func fromOf(h gomail.Header) (string, string) {
	if l, err := h.AddressList("From"); err == nil && len(l) > 0 {
		return strings.ToLower(l[0].Address), l[0].Name
	}
	v := h.Get("From")
	if a, err := mail.ParseAddress(v); err == nil {
		return strings.ToLower(a.Address), a.Name
	}
	if i := strings.LastIndexByte(v, '<'); i >= 0 {
		if j := strings.IndexByte(v[i:], '>'); j > 0 {
			return strings.ToLower(strings.TrimSpace(v[i+1 : i+j])), strings.Trim(strings.TrimSpace(v[:i]), `"`)
		}
	}
	return strings.ToLower(strings.TrimSpace(v)), ""
}

// msgIDs reads a list of message ids leniently: each <…>, or, in a header
// without angle brackets, each word with an @. Ids come without brackets,
// once each, in the header's order.
func msgIDs(v string) []string {
	var out []string
	add := func(id string) {
		id = strings.TrimSpace(id)
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	rest := v
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '>')
		if j < 0 {
			break
		}
		add(rest[i+1 : i+j])
		rest = rest[i+j+1:]
	}
	if len(out) == 0 {
		for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' || r == '\n' }) {
			if strings.Contains(w, "@") {
				add(w)
			}
		}
	}
	return out
}

// firstID is the first message id in v, "" if none.
func firstID(v string) string {
	if ids := msgIDs(v); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// cleanText is a text part's text with CRLF line ends made LF and the
// trailing blank space trimmed.
func cleanText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimRight(s, " \t\n")
}

// ErrNothingToReport is a message the reader reads past: a delivery
// report of delays only (the server keeps trying), or a report that
// names no failed recipient.
var ErrNothingToReport = errors.New("nothing to report")

// Inbound is the report p makes for the ingest path: a bounce for a
// delivery status notification with a failed recipient, a reply for any
// other message. The lead is not known (LeadID ""): Match says how to find
// it. A report of delays only is ErrNothingToReport.
func (p Parsed) Inbound() (senders.Inbound, error) {
	if p.Report != nil {
		failed := p.Report.Failed()
		if len(failed) == 0 {
			return senders.Inbound{}, ErrNothingToReport
		}
		var msgs []string
		for _, r := range failed {
			m := r.Status + " " + r.Recipient
			if r.Diagnostic != "" {
				m += ": " + r.Diagnostic
			}
			msgs = append(msgs, m)
		}
		in := senders.Inbound{Kind: senders.InboundBounce, At: p.Date, ProviderMessageID: p.MessageID, Subject: p.Subject,
			Message: strings.Join(msgs, "; "), Headers: p.Headers,
			Match: &senders.Match{Email: failed[0].Recipient}}
		if p.Report.OriginalMessageID != "" {
			in.Match.MessageIDs = []string{p.Report.OriginalMessageID}
		}
		return in, nil
	}
	ids := slices.Clone(p.InReplyTo)
	for _, id := range p.References {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return senders.Inbound{Kind: senders.InboundReply, At: p.Date, ProviderMessageID: p.MessageID, Subject: p.Subject,
		Body: p.Text, Headers: p.Headers, AutoReply: p.AutoReply,
		Match: &senders.Match{MessageIDs: ids, Email: p.From}}, nil
}
