package unipile

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
)

// SignatureHeader carries a webhook's signature: t=<unix seconds>, then
// one or more v0=<hex HMAC-SHA256 of "<t>.<raw body>" under the
// endpoint's secret>.
const SignatureHeader = "Unipile-Signature"

// SignatureTolerance is how far a signature's time may be from now.
const SignatureTolerance = 5 * time.Minute

// Why a webhook is refused.
var (
	ErrUnsigned     = errors.New("unipile: the webhook carries no Unipile-Signature")
	ErrBadSignature = errors.New("unipile: the webhook's signature does not match")
	ErrStale        = errors.New("unipile: the webhook's signature is older or newer than 5 minutes")
	ErrNoSecret     = errors.New("unipile: no webhook secret is set for the account")
)

// VerifyWebhook checks the signature of a webhook's raw body against the
// endpoint's secret at now: its time within SignatureTolerance, and one of
// its v0 values equal, compared in constant time, to the HMAC-SHA256 of
// "<t>.<body>".
func VerifyWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	if secret == "" {
		return ErrNoSecret
	}
	v := h.Get(SignatureHeader)
	if v == "" {
		return ErrUnsigned
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = val
		case "v0":
			if b, err := hex.DecodeString(val); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return ErrStale
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return ErrBadSignature
}

// Sign returns the Unipile-Signature value of body at t under secret, as
// Unipile computes it: for tests and for replaying a delivery by hand.
func Sign(secret string, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return "t=" + ts + ",v0=" + hex.EncodeToString(m.Sum(nil))
}

// event is the envelope of every webhook.
type event struct {
	ID        string          `json:"id"`
	CreatedAt optTime         `json:"created_at"`
	AccountID string          `json:"account_id"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// The event types leadline takes. Unipile's SDKs have named an accepted
// invitation both relation.request.accept and relation.new: both are
// taken.
const (
	EventMessageNew          = "message.new"
	EventRelationAccepted    = "relation.request.accept"
	EventRelationNew         = "relation.new"
	EventAccountDisconnected = "account.status.disconnected"
	EventAccountErrored      = "account.status.errored"
	EventAccountRunning      = "account.status.running"
)

// EventTypes are the event types a webhook endpoint should send.
var EventTypes = []string{EventMessageNew, EventRelationAccepted, EventRelationNew, EventAccountDisconnected, EventAccountErrored, EventAccountRunning}

// maxID bounds an id an event carries: what a lead's provider_id and
// public_identifier can hold.
const maxID = 200

// ErrInvalidEvent is an event whose values no lead or message can hold:
// an id over maxID characters or with a control character, text with a
// NUL or invalid UTF-8.
var ErrInvalidEvent = fmt.Errorf("unipile: the event holds a value leadline cannot keep: %w", senders.ErrInvalidReport)

// ParseWebhook reads a webhook's body: the account it is about and what
// it reports, without the sender (the caller knows it from the account).
// A reply is a message.new someone else wrote; an acceptance a
// relation.request.accept or relation.new; a disconnected, errored or
// running account a signal. Other types report nothing. An event whose
// values no lead can hold is ErrInvalidEvent.
func ParseWebhook(body []byte) (accountID string, reports []senders.Inbound, err error) {
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		return "", nil, fmt.Errorf("unipile: the webhook is not an event: %w", err)
	}
	if ev.AccountID == "" || ev.Type == "" {
		return "", nil, errors.New("unipile: the webhook names no account_id or type")
	}
	if !id(ev.AccountID) || !id(ev.Type) {
		return "", nil, ErrInvalidEvent
	}
	switch ev.Type {
	case EventMessageNew:
		var m message
		if err := json.Unmarshal(ev.Payload, &m); err != nil {
			return "", nil, fmt.Errorf("unipile: message.new: %w", err)
		}
		if !id(m.ID) || !id(m.ChatID) || !id(m.SenderID) || !apikit.Storable(m.Text) || !apikit.Storable(m.Specifics.Subject) {
			return "", nil, ErrInvalidEvent
		}
		if in, ok := reply(m, ev.CreatedAt.Time); ok {
			reports = append(reports, in)
		}
	case EventRelationAccepted, EventRelationNew:
		var r relationRequest
		if err := json.Unmarshal(ev.Payload, &r); err != nil {
			return "", nil, fmt.Errorf("unipile: %s: %w", ev.Type, err)
		}
		if !id(r.ID) || !id(r.User.ID) || !id(r.User.PublicIdentifier) {
			return "", nil, ErrInvalidEvent
		}
		if r.User.ID != "" || r.User.PublicIdentifier != "" {
			reports = append(reports, accepted(r.User, r.ID, orTime(ev.CreatedAt.Time, r.CreatedAt.Time)))
		}
	case EventAccountDisconnected, EventAccountErrored:
		reports = append(reports, lost(ev.Type, ev.CreatedAt.Time))
	case EventAccountRunning:
		reports = append(reports, senders.Inbound{Kind: senders.InboundSignal, Signal: senders.SignalRecovered, At: ev.CreatedAt.Time,
			Message: "Unipile reports the LinkedIn account running."})
	}
	return ev.AccountID, reports, nil
}

// id reports whether v can be kept as an id: at most maxID characters of
// one line of text ("" included).
func id(v string) bool {
	return len(v) <= maxID && apikit.OneLine("", v) == nil && !strings.ContainsRune(v, 0)
}

// lost is the signal of an account Unipile cannot use: disconnected (the
// session ended) or errored.
func lost(status string, at time.Time) senders.Inbound {
	msg := "Unipile reports the LinkedIn account disconnected: its owner must reconnect it in Unipile."
	if strings.HasSuffix(status, "errored") {
		msg = "Unipile reports an error on the LinkedIn account: see Unipile's dashboard, and reconnect the account if it asks."
	}
	return senders.Inbound{Kind: senders.InboundSignal, Signal: senders.SignalAccountDisconnected, At: at, Message: msg}
}

// reply is the report of a message someone else wrote: matched by who
// wrote it, then by the conversation leadline's own messages are in.
func reply(m message, at time.Time) (senders.Inbound, bool) {
	if m.IsSender || m.IsEvent || m.ID == "" || m.ChatID == "" {
		return senders.Inbound{}, false
	}
	return senders.Inbound{Kind: senders.InboundReply, At: orTime(m.Timestamp.Time, at), ProviderMessageID: messageID(m.ChatID, m.ID),
		Subject: m.Specifics.Subject, Body: m.Text, Match: &senders.Match{ProviderID: m.SenderID, Conversation: m.ChatID}}, true
}

// accepted is the report of a new relation: matched by the member's
// provider id, then its public identifier, then leadline's own sent
// invitation.
func accepted(u user, invitation string, at time.Time) senders.Inbound {
	return senders.Inbound{Kind: senders.InboundAccepted, At: at, Match: &senders.Match{ProviderID: u.ID,
		PublicIdentifier: strings.ToLower(u.PublicIdentifier), Invitation: invitation}}
}

// Dedupe is the inbound queue's dedupe key of a report about accountID:
// the same for a webhook and for polling, so that what both report is
// queued once.
func Dedupe(accountID string, in senders.Inbound) string {
	switch in.Kind {
	case senders.InboundReply:
		return accountID + "/message/" + in.ProviderMessageID
	case senders.InboundAccepted:
		if in.Match != nil {
			return accountID + "/relation/" + firstOf(in.Match.ProviderID, in.Match.PublicIdentifier, in.Match.Invitation)
		}
	}
	return accountID + "/" + in.Kind + "/" + in.Signal + "/" + in.At.UTC().Format(time.RFC3339Nano)
}

// Inbound polls each sender the transport worked for, at most every
// PollEvery: the account's status, the relations made since the last
// poll, and the new messages of others in every conversation of the
// account with activity since then (whoever started it). It is the
// fallback of the webhooks, reporting under the same dedupe keys. The
// cursor lives in memory: a sender's first poll in a process reads
// Lookback back. A sender that cannot be polled is logged and tried at
// the next poll, from the same cursor.
func (t *Transport) Inbound(ctx context.Context, until time.Time) ([]senders.Inbound, error) {
	t.mu.Lock()
	var due []*account
	for _, a := range t.known {
		if !until.Before(a.next) {
			due = append(due, a)
		}
	}
	t.mu.Unlock()
	var out []senders.Inbound
	for _, a := range due {
		t.mu.Lock()
		s, since := a.sender, a.since
		t.mu.Unlock()
		got, status, err := t.poll(ctx, &s, since, until)
		if err != nil {
			t.cfg.Logger.Warn("unipile: poll", "sender", s.Name, "error", err)
			if te, ok := senders.AsTransportError(err); ok && te.Kind == senders.SenderLevel && !slices.ContainsFunc(got, isSignal) {
				// What a read says of the account counts as an action's
				// answer would: the sender takes the signal.
				got = append(got, senders.Inbound{Kind: senders.InboundSignal, Signal: te.Signal, At: until, Message: te.Message})
			}
		}
		t.mu.Lock()
		a.next = until.Add(t.cfg.PollEvery)
		if err == nil {
			a.since = until
		}
		if status != "" && status != a.status {
			switch {
			case status == "disconnected" || status == "errored":
				got = append(got, lost(status, until))
			case status == "running" && (a.status == "disconnected" || a.status == "errored"):
				got = append(got, senders.Inbound{Kind: senders.InboundSignal, Signal: senders.SignalRecovered, At: until,
					Message: "Unipile reports the LinkedIn account running."})
			}
			a.status = status
		}
		t.mu.Unlock()
		acc := accountOf(&s).AccountID
		for i := range got {
			got[i].SenderID = s.ID
			if t.cfg.Sink == nil {
				continue
			}
			if _, err := t.cfg.Sink.PushReport(ctx, s.WorkspaceID, Source, Dedupe(acc, got[i]), got[i]); err != nil {
				return out, err
			}
		}
		if t.cfg.Sink == nil {
			out = append(out, got...)
		}
	}
	return out, nil
}

func isSignal(in senders.Inbound) bool { return in.Kind == senders.InboundSignal }

// poll reads one sender's news between since and until.
func (t *Transport) poll(ctx context.Context, s *senders.Sender, since, until time.Time) ([]senders.Inbound, string, error) {
	if accountOf(s) == nil {
		return nil, "", nil
	}
	info, err := t.account(ctx, s)
	if err != nil {
		return nil, "", err
	}
	out, err := t.acceptances(ctx, s, since, until)
	if err != nil {
		return out, info.Status, err
	}
	chats, err := t.activeChats(ctx, s, since)
	if err != nil {
		return out, info.Status, err
	}
	q := url.Values{"after": {stamp(since)}, "limit": {strconv.Itoa(pageSize)}}
	for _, c := range chats {
		var page list[message]
		if err := t.call(ctx, s, http.MethodGet, accountPath(s, "chats", c, "messages"), q, nil, &page); err != nil {
			return out, info.Status, err
		}
		for _, m := range page.Data {
			if m.ChatID == "" {
				m.ChatID = c
			}
			// after is exclusive; the times are checked here too.
			if in, ok := reply(m, until); ok && in.At.After(since) && !in.At.After(until) {
				out = append(out, in)
			}
		}
	}
	return out, info.Status, nil
}

// maxProfileChecks bounds the profiles one poll reads to confirm that a
// member whose invitation left the pending list is now a connection.
const maxProfileChecks = 10

// firstDegree are the network distances of a connection.
var firstDegree = []string{"FIRST_DEGREE", "DISTANCE_1"}

// acceptances returns the invitations accepted as far as one poll can
// tell. The account's newest relations that came between since and until
// are reported as webhooks would; and, without relying on a relation's
// optional created_at, every invitation leadline sent that is no longer
// among the account's pending ones is accepted when its member is in the
// relations read or, read one by one, is now a first-degree connection
// (an invitation withdrawn or expired leaves the list too).
func (t *Transport) acceptances(ctx context.Context, s *senders.Sender, since, until time.Time) ([]senders.Inbound, error) {
	var out []senders.Inbound
	var rels list[relation]
	if err := t.call(ctx, s, http.MethodGet, accountPath(s, "users", "me", "relations"), url.Values{"limit": {strconv.Itoa(pageSize)}}, nil, &rels); err != nil {
		return out, err
	}
	connected := map[string]bool{}
	for _, r := range rels.Data {
		connected[r.User.ID] = true
		if r.User.ID != "" && r.CreatedAt.After(since) && !r.CreatedAt.After(until) {
			out = append(out, accepted(r.User, "", r.CreatedAt.Time))
		}
	}
	if t.cfg.Invitations == nil {
		return out, nil
	}
	ours, err := t.cfg.Invitations.PendingInvitations(ctx, s.ID, 10*pageSize)
	if err != nil || len(ours) == 0 {
		return out, err
	}
	// leadline's list is read before Unipile's: an invitation in it was
	// sent before Unipile's list was read, so it is in that list unless it
	// left it.
	pending, whole, err := t.pendingSent(ctx, s)
	if err != nil || !whole {
		return out, err
	}
	checks := 0
	for _, inv := range ours {
		if inv.MemberID == "" || pending[inv.MemberID] || (inv.Invitation != "" && pending[inv.Invitation]) {
			continue
		}
		ok := connected[inv.MemberID]
		if !ok && checks < maxProfileChecks && t.mayReadProfile(s.ID, inv.MemberID, until) {
			checks++
			var p userProfile
			if err := t.call(ctx, s, http.MethodGet, accountPath(s, "users", inv.MemberID), nil, nil, &p); err != nil {
				if _, refused := senders.AsTransportError(err); refused {
					continue // the member cannot be read: nothing to tell
				}
				return out, err
			}
			ok = slices.Contains(firstDegree, strings.ToUpper(p.Specifics.NetworkDistance))
		}
		if ok {
			in := accepted(user{ID: inv.MemberID}, inv.Invitation, until)
			in.LeadID = inv.LeadID
			out = append(out, in)
		}
	}
	return out, nil
}

// profileRecheck is how long polling waits before it reads again the
// profile of a member whose invitation left the pending list without a
// connection (withdrawn, expired): profile reads are among LinkedIn's
// sensitive calls, and one a day per such member is enough.
const profileRecheck = 24 * time.Hour

// mayReadProfile reports whether polling may read the member's profile
// at now, and if so notes the read.
func (t *Transport) mayReadProfile(senderID, memberID string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.known[senderID]
	if !ok {
		return false
	}
	if a.profiles == nil || len(a.profiles) > 10000 {
		a.profiles = map[string]time.Time{}
	}
	if last, read := a.profiles[memberID]; read && now.Sub(last) < profileRecheck {
		return false
	}
	a.profiles[memberID] = now
	return true
}

// pendingSent returns the ids of the account's pending sent invitations
// and of the members they went to; whole is false when the list was
// longer than a poll reads.
func (t *Transport) pendingSent(ctx context.Context, s *senders.Sender) (map[string]bool, bool, error) {
	out := map[string]bool{}
	whole, err := t.eachSent(ctx, s, func(r relationRequest) bool {
		out[r.ID], out[r.User.ID] = true, true
		return true
	})
	return out, whole, err
}

// eachSent calls fn with the account's pending sent invitations, newest
// first, page by page (Unipile pages this list by offset), until fn
// answers false or maxSentPages were read; whole reports that the list
// was read to its end.
func (t *Transport) eachSent(ctx context.Context, s *senders.Sender, fn func(relationRequest) bool) (whole bool, err error) {
	q := url.Values{"type": {"sent"}, "limit": {strconv.Itoa(pageSize)}}
	for p := range maxSentPages {
		q.Set("offset", strconv.Itoa(p*pageSize))
		var page list[relationRequest]
		if err := t.call(ctx, s, http.MethodGet, accountPath(s, "users", "me", "relation-requests"), q, nil, &page); err != nil {
			return false, err
		}
		for _, r := range page.Data {
			if !fn(r) {
				return false, nil
			}
		}
		if len(page.Data) < pageSize {
			return true, nil
		}
	}
	return false, nil
}

// maxSentPages bounds the pages of pending invitations one read takes.
const maxSentPages = 10

// maxChatPages bounds the pages of chats one poll reads.
const maxChatPages = 10

// activeChats returns the account's conversations with a message after
// since. Unipile lists them by their last message, newest first (its
// after filter is on their creation, so it is not used): the list is read
// until a chat's last activity is not after since.
func (t *Transport) activeChats(ctx context.Context, s *senders.Sender, since time.Time) ([]string, error) {
	var out []string
	q := url.Values{"limit": {strconv.Itoa(pageSize)}}
	for range maxChatPages {
		var page list[chat]
		if err := t.call(ctx, s, http.MethodGet, accountPath(s, "chats"), q, nil, &page); err != nil {
			return out, err
		}
		for _, c := range page.Data {
			if last := orTime(c.LastMessageAt.Time, c.UpdatedAt.Time); !last.IsZero() && !last.After(since) {
				return out, nil
			}
			out = append(out, c.ID)
		}
		if len(page.Data) < pageSize {
			break
		}
		if page.NextCursor != "" {
			q.Set("cursor", page.NextCursor)
		} else {
			q.Set("offset", strconv.Itoa(len(out)))
		}
	}
	return out, nil
}

// account reads the account's status.
func (t *Transport) account(ctx context.Context, s *senders.Sender) (accountInfo, error) {
	var info accountInfo
	err := t.call(ctx, s, http.MethodGet, "/accounts/"+url.PathEscape(accountOf(s).AccountID), nil, nil, &info)
	return info, err
}

// stamp is a time as Unipile's filters take it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// NextInbound reports no time: Unipile's news come when they come.
func (t *Transport) NextInbound() (time.Time, bool) { return time.Time{}, false }
