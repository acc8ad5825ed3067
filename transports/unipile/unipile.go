// Package unipile is leadline's transport for LinkedIn accounts connected
// through Unipile's API, version 2: it views profiles, sends invitations,
// messages and InMails and follows people for the senders whose transport
// is unipile, and learns of acceptances, replies and the account's status
// from Unipile's webhooks (ParseWebhook, VerifyWebhook) and by polling
// (Inbound). docs/TRANSPORTS.md cites the pages of Unipile's documentation
// each request follows.
package unipile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
)

// DefaultBaseURL is Unipile's v2 API, used when a sender's settings name
// no base_url.
const DefaultBaseURL = "https://api.unipile.com/v2"

// Source is the inbound queue's source of what Unipile reports.
const Source = "unipile"

// The codes of the transport's errors (TransportError.Code).
const (
	// CodeAuthFailed: Unipile refused the API key.
	CodeAuthFailed = senders.SignalAuthFailed
	// CodeAccountDisconnected: Unipile lost the LinkedIn session.
	CodeAccountDisconnected = senders.SignalAccountDisconnected
	// CodeCredentialsMissing: the API key's environment variable is unset.
	CodeCredentialsMissing = "credentials_missing"
	// CodeRateLimited: Unipile or LinkedIn refused for now (429).
	CodeRateLimited = senders.SignalProviderRateLimited
	// CodeNoteRefused: LinkedIn refused the invitation's note (the free
	// account's monthly notes are used up, or the note is too long).
	CodeNoteRefused = "note_refused"
	// CodeRefused: the request was understood and refused (422 and other
	// 4xx), with the provider's message.
	CodeRefused = "provider_refused"
	// CodeProfileNotFound: no LinkedIn member has the lead's identifier.
	CodeProfileNotFound = "profile_not_found"
	// CodeProfileInaccessible: LinkedIn does not let the account reach the
	// member (out of network, private, blocked).
	CodeProfileInaccessible = "profile_inaccessible"
	// CodeInvitationPending: an invitation to the member is already
	// pending (or the action conflicts with the member's state).
	CodeInvitationPending = "invitation_pending"
	// CodeAccountNotFound: Unipile has no account under the sender's
	// account_id.
	CodeAccountNotFound = senders.SignalAccountNotFound
	// CodeMissingLinkedIn: the lead has no LinkedIn identifier at all.
	CodeMissingLinkedIn = "missing_linkedin"
	// CodeUnsupported: an action the transport does not perform (a like);
	// activation refuses such steps first.
	CodeUnsupported = "unsupported_action"
)

// classicInbox is the inbox a LinkedIn Classic conversation starts in.
const classicInbox = "CLASSIC_PRIMARY"

// maxAnswer bounds what is read of one of Unipile's answers.
const maxAnswer = 4 << 20

// DefaultPollEvery is how often Inbound polls each known sender.
const DefaultPollEvery = 10 * time.Minute

// CoolDown is how long a sender's actions pause after UnknownInARow
// unknown outcomes in a row on its account: LinkedIn's limits can surface
// as server errors, and trying the same invitation every tick would only
// deepen the trouble.
const CoolDown = 30 * time.Minute

// UnknownInARow is how many unknown outcomes in a row pause an account.
const UnknownInARow = 3

// DefaultLookback is how far back the first poll of a sender in a process
// reads: what arrived while no process polled it (a restart) is read
// again, and what came before is dropped as duplicate by its dedupe key.
const DefaultLookback = 24 * time.Hour

// Config is what a Transport needs.
type Config struct {
	// Credentials give the API key named by a sender's api_key_env.
	Credentials senders.Credentials
	Clock       apikit.Clock
	Logger      *slog.Logger
	// HTTPClient makes the calls; its timeout bounds each one. Default: a
	// client with a 30-second timeout.
	HTTPClient *http.Client
	// Sink, when set, receives what polling finds (deduplicated with the
	// webhooks' reports by Dedupe), and Inbound returns nothing; when nil,
	// Inbound returns it.
	Sink senders.InboundSink
	// PollEvery is how often each sender is polled; DefaultPollEvery when
	// zero.
	PollEvery time.Duration
	// Lookback is how far back a sender's first poll reads;
	// DefaultLookback when zero.
	Lookback time.Duration
	// Invitations, when set, gives polling the invitations leadline sent
	// that are still pending: those that leave Unipile's list of pending
	// invitations and whose member is now a connection were accepted.
	Invitations senders.Invitations
}

// Transport performs actions through Unipile. It is safe for concurrent
// use.
type Transport struct {
	cfg Config

	mu sync.Mutex
	// results are the actions performed by this process, by key: the fast
	// path of Perform and Lookup. Unipile takes no idempotency key; what
	// was performed is otherwise found at Unipile (Lookup).
	results map[string]senders.Result
	// known are the senders the transport has worked for, by id: the ones
	// Inbound polls.
	known map[string]*account
}

// account is what polling keeps of one sender.
type account struct {
	sender senders.Sender
	since  time.Time // what happened after it is new
	next   time.Time // the next poll
	status string    // the account's last known status
	// unknown counts the unknown outcomes in a row of its actions; at
	// UnknownInARow its actions pause until coolUntil.
	unknown   int
	coolUntil time.Time
	// profiles are when polling last read the profile of a member whose
	// invitation left the pending list, by member.
	profiles map[string]time.Time
}

// New returns a transport.
func New(cfg Config) *Transport {
	if cfg.Credentials == nil {
		cfg.Credentials = senders.EnvCredentials{}
	}
	if cfg.Clock == nil {
		cfg.Clock = apikit.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = DefaultPollEvery
	}
	if cfg.Lookback <= 0 {
		cfg.Lookback = DefaultLookback
	}
	return &Transport{cfg: cfg, results: map[string]senders.Result{}, known: map[string]*account{}}
}

var _ senders.Transport = (*Transport)(nil)

// learn remembers s for polling and returns what this process performed
// under key, if anything. A sender's first poll reads Lookback back.
func (t *Transport) learn(s *senders.Sender, key string) (senders.Result, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.known[s.ID]
	if !ok {
		now := t.cfg.Clock.Now()
		a = &account{since: now.Add(-t.cfg.Lookback), next: now, status: "running"}
		t.known[s.ID] = a
	}
	a.sender = *s
	r, done := t.results[key]
	return r, done
}

// remember keeps the result of key.
func (t *Transport) remember(key string, r senders.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.results[key] = r
}

// Perform performs req once per key. While the sender's account cools
// down after unknown outcomes in a row, nothing is sent: the answer is a
// provider_rate_limited refusal until the cool-down ends.
func (t *Transport) Perform(ctx context.Context, req senders.Request) (senders.Result, error) {
	if r, done := t.learn(req.Sender, req.Key); done {
		return r, nil
	}
	now := t.cfg.Clock.Now()
	if until := t.coolingUntil(req.Sender.ID); until.After(now) {
		wait := until.Sub(now)
		return senders.Result{}, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeRateLimited, Signal: CodeRateLimited, RetryAfter: wait,
			Message: fmt.Sprintf("Unipile gave no answer to %d actions in a row of sender %s (LinkedIn's limits can surface as server errors): its actions pause for %s.",
				UnknownInARow, req.Sender.Name, wait.Round(time.Second))}
	}
	res, err := t.perform(ctx, req)
	t.outcome(req.Sender.ID, err, now)
	if err == nil {
		t.remember(req.Key, res)
	}
	return res, err
}

// coolingUntil is when the sender's cool-down ends (zero: none).
func (t *Transport) coolingUntil(senderID string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a, ok := t.known[senderID]; ok {
		return a.coolUntil
	}
	return time.Time{}
}

// outcome counts unknown outcomes in a row: any answer from Unipile, a
// refusal included, ends the run.
func (t *Transport) outcome(senderID string, err error, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.known[senderID]
	if !ok {
		return
	}
	if _, refused := senders.AsTransportError(err); err == nil || refused {
		a.unknown = 0
		return
	}
	a.unknown++
	if a.unknown >= UnknownInARow {
		a.unknown, a.coolUntil = 0, now.Add(CoolDown)
	}
}

func (t *Transport) perform(ctx context.Context, req senders.Request) (senders.Result, error) {
	s := req.Sender
	now := t.cfg.Clock.Now()
	switch req.Action {
	case senders.ProfileView:
		return t.viewProfile(ctx, s, req.Lead)
	case senders.Invite:
		m, err := t.member(ctx, s, req.Lead)
		if err != nil {
			return senders.Result{}, err
		}
		var out relationRequest
		err = t.call(ctx, s, http.MethodPost, accountPath(s, "users", "me", "relation-requests"), nil, invitation{UserID: m.ProviderID, Message: req.Note}, &out)
		if te, ok := senders.AsTransportError(err); ok && req.Note != "" && te.Code == CodeRefused && aboutNote(te.Message) {
			te.Code = CodeNoteRefused
		}
		if err != nil {
			return senders.Result{}, withMember(err, m)
		}
		return senders.Result{ProviderMessageID: out.ID, Invitation: out.ID, At: now, Member: m}, nil
	case senders.Message, senders.InMail:
		return t.send(ctx, req, now)
	case senders.Follow:
		m, err := t.member(ctx, s, req.Lead)
		if err != nil {
			return senders.Result{}, err
		}
		var out relationRequest
		if err := t.call(ctx, s, http.MethodPost, accountPath(s, "users", "me", "follow", m.ProviderID), nil, nil, &out); err != nil {
			return senders.Result{}, withMember(err, m)
		}
		return senders.Result{ProviderMessageID: out.ID, At: now, Member: m}, nil
	}
	return senders.Result{}, &senders.TransportError{Kind: senders.Permanent, Code: CodeUnsupported,
		Message: fmt.Sprintf("The unipile transport does not perform %s; remove the step or give the sequence a sender on another transport.", req.Action)}
}

// send writes a message or an InMail: into the conversation of the
// earlier messages when there is one, else in a new conversation.
func (t *Transport) send(ctx context.Context, req senders.Request, now time.Time) (senders.Result, error) {
	s := req.Sender
	if chatID := threadChat(req); chatID != "" {
		var out messageSent
		if err := t.call(ctx, s, http.MethodPost, accountPath(s, "chats", chatID, "messages", "send"), nil, sendMessage{Text: req.Body}, &out); err != nil {
			return senders.Result{}, err
		}
		return senders.Result{ProviderMessageID: messageID(chatID, out.MessageID.first()), At: now}, nil
	}
	m, err := t.member(ctx, s, req.Lead)
	if err != nil {
		return senders.Result{}, err
	}
	body := startChat{UsersIDs: []string{m.ProviderID}, Text: req.Body}
	if req.Action == senders.InMail {
		body.Specifics = &chatSpecifics{LinkedIn: linkedInChat{Classic: classicChat{InMail: true}}}
	}
	var out chatStarted
	if err := t.call(ctx, s, http.MethodPost, accountPath(s, "inboxes", classicInbox, "chats", "send"), nil, body, &out); err != nil {
		return senders.Result{}, withMember(err, m)
	}
	return senders.Result{ProviderMessageID: messageID(out.ChatID, out.MessageID.first()), At: now, Member: m}, nil
}

// withMember names, on a refusal, the member the transport resolved
// before it: the lead keeps what was learned even when the step fails.
func withMember(err error, m *senders.Member) error {
	if te, ok := senders.AsTransportError(err); ok && te.Member == nil {
		te.Member = m
	}
	return err
}

// threadChat is the conversation a message continues: the chat of the
// latest earlier message, "" for a first message or an InMail.
func threadChat(req senders.Request) string {
	if req.Action != senders.Message {
		return ""
	}
	for i := len(req.Thread.Earlier) - 1; i >= 0; i-- {
		if chatID, _ := splitMessageID(req.Thread.Earlier[i]); chatID != "" {
			return chatID
		}
	}
	return ""
}

// viewProfile reads the lead's profile and, when LinkedIn gives a visit
// token, reports the visit: what the lead sees as a profile view.
func (t *Transport) viewProfile(ctx context.Context, s *senders.Sender, lead senders.Recipient) (senders.Result, error) {
	p, err := t.profile(ctx, s, lead)
	if err != nil {
		return senders.Result{}, err
	}
	if tok := p.Specifics.NotifyVisitToken; tok != "" {
		if err := t.call(ctx, s, http.MethodPost, accountPath(s, "users", "visit-profile"), url.Values{"token": {tok}}, nil, nil); err != nil {
			return senders.Result{}, err
		}
	}
	return senders.Result{At: t.cfg.Clock.Now(), Profile: p.fields(), Member: p.member()}, nil
}

// profile reads the lead's LinkedIn profile by the best identifier it has.
func (t *Transport) profile(ctx context.Context, s *senders.Sender, lead senders.Recipient) (*userProfile, error) {
	id := firstOf(lead.ProviderID, lead.PublicIdentifier, lead.LinkedInID)
	if id == "" {
		return nil, &senders.TransportError{Kind: senders.Permanent, Code: CodeMissingLinkedIn,
			Message: "The lead has no LinkedIn provider id, public identifier or LinkedIn id; add one (the part after linkedin.com/in/)."}
	}
	var p userProfile
	if err := t.call(ctx, s, http.MethodGet, accountPath(s, "users", id), nil, nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// member returns the lead's LinkedIn member: the provider id the lead
// holds, or the one its profile gives when the lead has only a public
// identifier (or a LinkedIn id). The caller reports a looked-up member in
// its result, for the lead to keep.
func (t *Transport) member(ctx context.Context, s *senders.Sender, lead senders.Recipient) (*senders.Member, error) {
	if lead.ProviderID != "" {
		return &senders.Member{ProviderID: lead.ProviderID, PublicIdentifier: lead.PublicIdentifier}, nil
	}
	p, err := t.profile(ctx, s, lead)
	if err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, fmt.Errorf("unipile: the profile of %q names no provider id", firstOf(lead.PublicIdentifier, lead.LinkedInID))
	}
	return p.member(), nil
}

// userID returns the lead's LinkedIn provider id (member).
func (t *Transport) userID(ctx context.Context, s *senders.Sender, lead senders.Recipient) (string, error) {
	m, err := t.member(ctx, s, lead)
	if err != nil {
		return "", err
	}
	return m.ProviderID, nil
}

// Lookup returns the result of the action performed under req.Key. What
// this process performed is known; anything else is looked for at
// Unipile, from the request alone (a restart loses nothing): the
// invitation among the sender's pending ones to the lead, the message
// among the conversation's by its text, the follow on the profile. A
// profile view is never found (viewing again is harmless).
func (t *Transport) Lookup(ctx context.Context, req senders.Request) (senders.Result, bool, error) {
	if r, done := t.learn(req.Sender, req.Key); done {
		return r, true, nil
	}
	res, found, err := t.find(ctx, req)
	if te, ok := senders.AsTransportError(err); ok && te.Kind == senders.Permanent {
		// No such member (any more): nothing to find. Performed again, the
		// action meets the same refusal, which the runner records.
		return senders.Result{}, false, nil
	}
	if err != nil || !found {
		return senders.Result{}, false, err
	}
	t.remember(req.Key, res)
	return res, true, nil
}

// pageSize is the page of the lists Lookup and polling read.
const pageSize = 100

func (t *Transport) find(ctx context.Context, req senders.Request) (senders.Result, bool, error) {
	s, now := req.Sender, t.cfg.Clock.Now()
	switch req.Action {
	case senders.Invite:
		m, err := t.member(ctx, s, req.Lead)
		if err != nil {
			return senders.Result{}, false, err
		}
		var res senders.Result
		found := false
		_, err = t.eachSent(ctx, s, func(r relationRequest) bool {
			if r.User.ID == m.ProviderID {
				res, found = senders.Result{ProviderMessageID: r.ID, Invitation: r.ID, At: orTime(r.CreatedAt.Time, now), Member: m}, true
			}
			return !found
		})
		return res, found, err
	case senders.Message, senders.InMail:
		var chats []string
		if c := threadChat(req); c != "" {
			chats = []string{c}
		} else {
			uid, err := t.userID(ctx, s, req.Lead)
			if err != nil {
				return senders.Result{}, false, err
			}
			var uc userChats
			if err := t.call(ctx, s, http.MethodGet, accountPath(s, "users", uid, "chat"), nil, nil, &uc); err != nil {
				return senders.Result{}, false, err
			}
			for _, c := range uc.Data {
				chats = append(chats, c.ChatID)
			}
		}
		for _, c := range chats {
			if r, ok, err := t.findMessage(ctx, s, c, req); err != nil || ok {
				return r, ok, err
			}
		}
		return senders.Result{}, false, nil
	case senders.Follow:
		p, err := t.profile(ctx, s, req.Lead)
		if err != nil {
			return senders.Result{}, false, err
		}
		return senders.Result{At: now}, p.Following, nil
	}
	return senders.Result{}, false, nil
}

// findMessage looks in a conversation's latest messages (newest first)
// for one the sender wrote with req's text, newer than the earlier
// messages req continues.
func (t *Transport) findMessage(ctx context.Context, s *senders.Sender, chatID string, req senders.Request) (senders.Result, bool, error) {
	var page list[message]
	if err := t.call(ctx, s, http.MethodGet, accountPath(s, "chats", chatID, "messages"), url.Values{"limit": {"50"}}, nil, &page); err != nil {
		return senders.Result{}, false, err
	}
	for _, m := range page.Data {
		id := messageID(chatID, m.ID)
		if slices.Contains(req.Thread.Earlier, id) {
			break // what req continues: anything older came before it
		}
		if m.IsSender && strings.TrimSpace(m.Text) == strings.TrimSpace(req.Body) {
			return senders.Result{ProviderMessageID: id, At: orTime(m.Timestamp.Time, t.cfg.Clock.Now())}, true, nil
		}
	}
	return senders.Result{}, false, nil
}

// messageID is the ProviderMessageID of a message: its conversation and
// its id, so that a later message finds the conversation again.
func messageID(chatID, msgID string) string { return senders.ConversationPrefix(chatID) + msgID }

// splitMessageID returns the conversation and message of a ProviderMessageID.
func splitMessageID(id string) (chatID, msgID string) {
	chatID, msgID, ok := strings.Cut(id, "/")
	if !ok || chatID == "" {
		return "", ""
	}
	return chatID, msgID
}

// accountPath is the path of a method called on behalf of s's account.
func accountPath(s *senders.Sender, parts ...string) string {
	acc := ""
	if u := accountOf(s); u != nil {
		acc = u.AccountID
	}
	return "/" + escapeJoin(append([]string{acc}, parts...))
}

func escapeJoin(parts []string) string {
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// call sends one request on behalf of s and decodes the answer into out.
// A refusal is a *senders.TransportError; an answer that never came or a
// server error is a plain error (the outcome is unknown).
func (t *Transport) call(ctx context.Context, s *senders.Sender, method, path string, q url.Values, body, out any) error {
	u := accountOf(s)
	if u == nil {
		return noSettings(s)
	}
	key, err := t.cfg.Credentials.Secret(ctx, s, u.APIKeyEnv)
	if err != nil {
		if errors.Is(err, senders.ErrCredentialsMissing) {
			return &senders.TransportError{Kind: senders.SenderLevel, Code: CodeCredentialsMissing, Signal: senders.SignalCredentialsMissing,
				Message: fmt.Sprintf("Unipile's API key for sender %s is not set: set %s in the server's environment and restart.", s.Name, u.APIKeyEnv)}
		}
		return err
	}
	base := strings.TrimRight(firstOf(u.BaseURL, DefaultBaseURL), "/")
	target := base + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-KEY", key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.cfg.HTTPClient.Do(req)
	if err != nil {
		// The error names the URL, never the key, which is a header.
		return fmt.Errorf("unipile: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("unipile: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out == nil || len(bytes.TrimSpace(data)) == 0 {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("unipile: %s %s: the answer is not the documented JSON: %w", method, path, err)
		}
		return nil
	}
	err = answerError(s, resp, data, t.cfg.Clock.Now(), strings.HasPrefix(path, "/accounts/"))
	var unverified *errAccountUnverified
	if errors.As(err, &unverified) {
		// A 404 from Unipile itself on a member's path: the account or
		// the member is missing, and the account's own read says which.
		if _, aerr := t.account(ctx, s); aerr != nil {
			return aerr
		}
		return unverified.member
	}
	return err
}

// noSettings is the error of a sender without unipile settings.
func noSettings(s *senders.Sender) error {
	return &senders.TransportError{Kind: senders.SenderLevel, Code: CodeCredentialsMissing, Signal: senders.SignalCredentialsMissing,
		Message: fmt.Sprintf("Sender %s has no unipile settings (account_id, api_key_env); add them to the setup file and apply it.", s.Name)}
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}

// aboutNote reports whether a refusal of an invitation speaks of its note.
func aboutNote(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range []string{"note", "message", "character", "custom"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func orTime(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}
