package unipile_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/unipile"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

const annID = "ACoAAB1lee0000000000000000000000000000"

type bundle struct {
	fake   *fakeUnipile
	clock  *apikit.FakeClock
	tr     *unipile.Transport
	sender *senders.Sender
	sink   *sink
}

func setup(t *testing.T, withSink bool) *bundle {
	t.Helper()
	f := newFake(t)
	clock := apikit.NewFakeClock(t0)
	b := &bundle{fake: f, clock: clock}
	cfg := unipile.Config{Credentials: creds{"UNIPILE_API_KEY": apiKey, "WRONG_KEY": "nope"}, Clock: clock,
		Logger: slog.New(slog.DiscardHandler), HTTPClient: f.srv.Client()}
	if withSink {
		b.sink = &sink{pushed: map[string]senders.Inbound{}}
		cfg.Sink = b.sink
	}
	b.tr = unipile.New(cfg)
	b.sender = &senders.Sender{ID: "snd-ann", WorkspaceID: "ws-1", Name: "max-li", Channel: senders.LinkedIn, Transport: unipile.Name,
		Settings: (&unipile.Account{AccountID: "acc_ann", APIKeyEnv: "UNIPILE_API_KEY", BaseURL: f.srv.URL + "/v2"}).Settings()}
	return b
}

func (b *bundle) req(key string, a senders.Action, lead senders.Recipient) senders.Request {
	return senders.Request{Key: key, Sender: b.sender, Action: a, Lead: lead, Purpose: senders.PurposeSequence}
}

var ann = senders.Recipient{LeadID: "lead-ann", Name: "Ann Lee", PublicIdentifier: "ann-lee-berlin"}
var annByID = senders.Recipient{LeadID: "lead-ann", Name: "Ann Lee", ProviderID: annID}

func transportError(t *testing.T, err error) *senders.TransportError {
	t.Helper()
	te, ok := senders.AsTransportError(err)
	if !ok {
		t.Fatalf("want a transport error, got %v", err)
	}
	return te
}

// TestProfileView: the profile is read by the lead's public identifier,
// the visit is reported with LinkedIn's token, and the profile keeps the
// provider's id.
func TestProfileView(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	res, err := b.tr.Perform(context.Background(), b.req("k-view", senders.ProfileView, ann))
	is.NoErr(err)
	calls := b.fake.calls()
	is.Equal(routes(calls), []string{"GET /v2/acc_ann/users/ann-lee-berlin", "POST /v2/acc_ann/users/visit-profile?token=visit-token-ann-1"})
	is.Equal(calls[0].Key, apiKey) // X-API-KEY
	is.Equal(res.Profile["provider_id"], annID)
	is.Equal(res.Profile["name"], "Ann Lee")
	is.Equal(res.Profile["headline"], "CTO at Globex")
	is.Equal(res.Profile["public_identifier"], "ann-lee-berlin")
	is.Equal(res.Profile["network_distance"], "SECOND_DEGREE")
	is.Equal(res.At, t0)
}

// TestInvite: an invitation carries the rendered note to the provider id;
// a lead known by public identifier is looked up first; a key is
// performed once.
func TestInvite(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()
	req := b.req("k-invite", senders.Invite, annByID)
	req.Note = "Hi Ann!"
	res, err := b.tr.Perform(ctx, req)
	is.NoErr(err)
	calls := b.fake.calls()
	is.Equal(routes(calls), []string{"POST /v2/acc_ann/users/me/relation-requests"})
	is.Equal(calls[0].Body, map[string]any{"user_id": annID, "message": "Hi Ann!"})
	is.Equal(res.ProviderMessageID, "inv-7300000000000000001")
	again, err := b.tr.Perform(ctx, req)
	is.NoErr(err)
	is.Equal(again, res)
	is.Equal(len(b.fake.calls()), 0) // once per key
	got, found, err := b.tr.Lookup(ctx, req)
	is.NoErr(err)
	is.True(found)
	is.Equal(got, res)

	// Without a provider id, and without a note: no message field.
	_, err = b.tr.Perform(ctx, b.req("k-invite-2", senders.Invite, ann))
	is.NoErr(err)
	calls = b.fake.calls()
	is.Equal(routes(calls), []string{"GET /v2/acc_ann/users/ann-lee-berlin", "POST /v2/acc_ann/users/me/relation-requests"})
	is.Equal(calls[1].Body, map[string]any{"user_id": annID})
}

// TestInviteRefused: a 422 to an invitation with a note is note_refused
// (permanent), with the provider's words; without a note it is a plain
// refusal.
func TestInviteRefused(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()
	b.fake.script("POST /v2/acc_ann/users/me/relation-requests", answer{status: 422, file: "error_422.json"}, answer{status: 422, file: "error_422.json"})
	req := b.req("k-note", senders.Invite, annByID)
	req.Note = "A very long note"
	_, err := b.tr.Perform(ctx, req)
	te := transportError(t, err)
	is.Equal(te.Kind, senders.Permanent)
	is.Equal(te.Code, unipile.CodeNoteRefused)
	is.True(strings.Contains(te.Message, "The invitation message exceeds what this account may send."))
	_, err = b.tr.Perform(ctx, b.req("k-plain", senders.Invite, annByID))
	te = transportError(t, err)
	is.Equal(te.Kind, senders.Permanent)
	is.Equal(te.Code, unipile.CodeRefused)
	// Refused is not performed: Lookup finds no invitation to Bob.
	req.Lead = senders.Recipient{LeadID: "lead-bob", ProviderID: "ACoAABob000000000000000000000000000000"}
	b.fake.calls()
	_, found, err := b.tr.Lookup(ctx, req)
	is.NoErr(err)
	is.True(!found)
	is.Equal(routes(b.fake.calls()), []string{"GET /v2/acc_ann/users/me/relation-requests?limit=100&offset=0&type=sent"})
}

// TestMessagesThread: the first message starts a conversation in the
// classic inbox; the next goes into the same conversation, found from the
// earlier message's ProviderMessageID.
func TestMessagesThread(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()
	first := b.req("k-m1", senders.Message, annByID)
	first.Body = "Thanks for connecting, Ann!"
	res, err := b.tr.Perform(ctx, first)
	is.NoErr(err)
	is.Equal(res.ProviderMessageID, "chat-ann-1/msg-ann-1")
	calls := b.fake.calls()
	is.Equal(routes(calls), []string{"POST /v2/acc_ann/inboxes/CLASSIC_PRIMARY/chats/send"})
	is.Equal(calls[0].Body, map[string]any{"users_ids": []any{annID}, "text": "Thanks for connecting, Ann!"})

	second := b.req("k-m2", senders.Message, annByID)
	second.Body, second.Thread = "Any news?", senders.Thread{Earlier: []string{res.ProviderMessageID}}
	res2, err := b.tr.Perform(ctx, second)
	is.NoErr(err)
	is.Equal(res2.ProviderMessageID, "chat-ann-1/msg-ann-2") // message_id came as a list
	calls = b.fake.calls()
	is.Equal(routes(calls), []string{"POST /v2/acc_ann/chats/chat-ann-1/messages/send"})
	is.Equal(calls[0].Body, map[string]any{"text": "Any news?"})
}

// TestInMailAndFollow: an InMail starts a classic chat with the inmail
// option; a follow follows the provider id; a like is not performed.
func TestInMailAndFollow(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()
	req := b.req("k-inmail", senders.InMail, annByID)
	req.Subject, req.Body = "Platform teams", "Hello Ann"
	_, err := b.tr.Perform(ctx, req)
	is.NoErr(err)
	calls := b.fake.calls()
	is.Equal(routes(calls), []string{"POST /v2/acc_ann/inboxes/CLASSIC_PRIMARY/chats/send"})
	is.Equal(calls[0].Body["specifics"], map[string]any{"linkedin": map[string]any{"classic": map[string]any{"inmail": true}}})

	res, err := b.tr.Perform(ctx, b.req("k-follow", senders.Follow, annByID))
	is.NoErr(err)
	is.Equal(routes(b.fake.calls()), []string{"POST /v2/acc_ann/users/me/follow/" + annID})
	is.Equal(res.ProviderMessageID, "follow-ann-1")

	_, err = b.tr.Perform(ctx, b.req("k-like", senders.Like, annByID))
	te := transportError(t, err)
	is.Equal(te.Kind, senders.Permanent)
	is.Equal(te.Code, unipile.CodeUnsupported)
	is.Equal(len(b.fake.calls()), 0)
}

// problemBody is Unipile's error answer of a type.
func problemBody(status int, typ, detail string) string {
	return fmt.Sprintf(`{"object":"Error","status":%d,"type":%q,"title":"Error","detail":%q,"req_id":"req-1"}`, status, typ, detail)
}

// TestErrors: one case per row of unipile.Errors, and who each answer
// concerns: a member's refusal is the lead's alone, an answer about the
// key or the account is the sender's.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	typed := func(status int, typ string) answer {
		return answer{status: status, body: problemBody(status, typ, "As the provider said it.")}
	}
	for name, c := range map[string]struct {
		answer  answer
		account []answer // the account's own read, when the answer leads to it
		keyEnv  string
		kind    senders.ErrorKind
		code    string
		says    string
	}{
		"session lost":          {answer{status: 401, file: "error_401_disconnected.json"}, nil, "", senders.SenderLevel, unipile.CodeAccountDisconnected, "reconnect the account"},
		"invalid credentials":   {typed(401, "provider/invalid_credentials"), nil, "", senders.SenderLevel, unipile.CodeAccountDisconnected, "reconnect the account"},
		"key refused":           {answer{}, nil, "WRONG_KEY", senders.SenderLevel, unipile.CodeAuthFailed, "Check the key in WRONG_KEY"},
		"key expired":           {typed(401, "api/expired_authorization"), nil, "", senders.SenderLevel, unipile.CodeAuthFailed, "Check the key"},
		"key unreadable":        {typed(400, "api/invalid_auth_format"), nil, "", senders.SenderLevel, unipile.CodeAuthFailed, "Check the key"},
		"key unset":             {answer{}, nil, "UNSET_KEY", senders.SenderLevel, unipile.CodeCredentialsMissing, "set UNSET_KEY"},
		"subscription inactive": {typed(403, "api/inactive_subscription"), nil, "", senders.SenderLevel, unipile.CodeAccountDisconnected, "dashboard"},
		"member inaccessible":   {answer{status: 403, file: "error_403_insufficient_permissions.json"}, nil, "", senders.Permanent, unipile.CodeProfileInaccessible, "the sender goes on"},
		"forbidden, no type":    {answer{status: 403}, nil, "", senders.Permanent, unipile.CodeProfileInaccessible, "Forbidden"},
		"no such member":        {typed(404, "provider/resource_not_found"), nil, "", senders.Permanent, unipile.CodeProfileNotFound, "identifier"},
		"no such member (api)":  {typed(404, "api/resource_not_found"), []answer{{status: 200, file: "account.json"}}, "", senders.Permanent, unipile.CodeProfileNotFound, "identifier"},
		"no such account":       {typed(404, "api/resource_not_found"), []answer{{status: 404, file: "error_404_account.json"}}, "", senders.SenderLevel, unipile.CodeAccountNotFound, "Correct account_id"},
		"already pending":       {typed(409, "api/already_exists"), nil, "", senders.Permanent, unipile.CodeInvitationPending, "already be pending"},
		"unprocessable":         {answer{status: 422, file: "error_422.json"}, nil, "", senders.Permanent, unipile.CodeRefused, "(provider/action_refused)"},
		"bad parameters":        {typed(400, "provider/invalid_parameters"), nil, "", senders.Permanent, unipile.CodeRefused, "refused"},
		"gone":                  {typed(410, ""), nil, "", senders.Permanent, unipile.CodeRefused, "refused"},
		"rate limited":          {answer{status: 429, file: "error_429.json", header: map[string]string{"Retry-After": "120"}}, nil, "", senders.SenderLevel, unipile.CodeRateLimited, "pause for 2m0s"},
		"provider rate limited": {typed(500, "provider/too_many_requests"), nil, "", senders.SenderLevel, unipile.CodeRateLimited, "pause for an hour"},
		"not implemented":       {typed(501, "api/not_implemented"), nil, "", senders.Permanent, unipile.CodeUnsupported, "refused"},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			b := setup(t, false)
			if c.keyEnv != "" {
				b.sender.Settings = (&unipile.Account{AccountID: "acc_ann", APIKeyEnv: c.keyEnv, BaseURL: b.fake.srv.URL + "/v2"}).Settings()
			}
			if c.answer.status != 0 {
				b.fake.script("POST /v2/acc_ann/users/me/follow/"+annID, c.answer)
			}
			b.fake.script("GET /v2/accounts/acc_ann", c.account...)
			_, err := b.tr.Perform(ctx, b.req("k", senders.Follow, annByID))
			te := transportError(t, err)
			is.Equal(te.Kind, c.kind)
			is.Equal(te.Code, c.code)
			if c.kind == senders.SenderLevel {
				is.Equal(te.Signal, c.code) // the sender's health takes it
			} else {
				is.Equal(te.Signal, "")
			}
			is.True(strings.Contains(te.Message, c.says))
			is.True(!strings.Contains(te.Message, apiKey)) // never the key
			if name == "rate limited" {
				is.Equal(te.RetryAfter, 2*time.Minute)
			}
		})
	}
	// Every row of the table is a case above, and a 5xx one of
	// TestUnknownOutcome.
	is := is.New(t)
	is.Equal(len(unipile.Errors), 14)
}

// TestCoolDown: three unknown outcomes in a row pause the account's
// actions as provider_rate_limited without a call to Unipile, until the
// cool-down ends; an answer of any kind ends the run.
func TestCoolDown(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()
	route := "POST /v2/acc_ann/users/me/follow/" + annID
	b.fake.script(route, answer{status: 500}, answer{status: 500}, answer{status: 422, file: "error_422.json"})
	for i := range 2 {
		_, err := b.tr.Perform(ctx, b.req(fmt.Sprint("k", i), senders.Follow, annByID))
		_, refused := senders.AsTransportError(err)
		is.True(err != nil && !refused) // unknown
	}
	_, err := b.tr.Perform(ctx, b.req("k2", senders.Follow, annByID))
	is.Equal(transportError(t, err).Code, unipile.CodeRefused) // an answer: the run ends
	b.fake.script(route, answer{status: 500}, answer{status: 503}, answer{hangUp: true})
	for i := range 3 {
		_, err := b.tr.Perform(ctx, b.req(fmt.Sprint("u", i), senders.Follow, annByID))
		_, refused := senders.AsTransportError(err)
		is.True(err != nil && !refused)
	}
	b.fake.calls()
	_, err = b.tr.Perform(ctx, b.req("next", senders.Follow, annByID))
	te := transportError(t, err)
	is.Equal(te.Kind, senders.SenderLevel)
	is.Equal(te.Signal, senders.SignalProviderRateLimited)
	is.Equal(te.RetryAfter, unipile.CoolDown)
	is.Equal(len(b.fake.calls()), 0) // nothing reached Unipile
	b.clock.Advance(unipile.CoolDown)
	_, err = b.tr.Perform(ctx, b.req("next", senders.Follow, annByID))
	is.NoErr(err)
}

// TestUnknownOutcome: a 5xx or a dropped connection is not a transport
// error; Lookup then looks at Unipile before anything is sent again.
func TestUnknownOutcome(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()

	// The invitation went out, the answer did not come back.
	b.fake.script("POST /v2/acc_ann/users/me/relation-requests", answer{hangUp: true})
	inv := b.req("k-inv", senders.Invite, annByID)
	_, err := b.tr.Perform(ctx, inv)
	is.True(err != nil)
	_, isTE := senders.AsTransportError(err)
	is.True(!isTE)
	b.fake.calls()
	res, found, err := b.tr.Lookup(ctx, inv)
	is.NoErr(err)
	is.True(found)
	is.Equal(res.ProviderMessageID, "inv-7300000000000000001")
	is.Equal(routes(b.fake.calls()), []string{"GET /v2/acc_ann/users/me/relation-requests?limit=100&offset=0&type=sent"})
	// Found once, it is known: performing the key again sends nothing.
	again, err := b.tr.Perform(ctx, inv)
	is.NoErr(err)
	is.Equal(again, res)
	is.Equal(len(b.fake.calls()), 0)

	// A first message whose answer was a 502: the conversation is found
	// by the person, the message by its text.
	b.fake.script("POST /v2/acc_ann/inboxes/CLASSIC_PRIMARY/chats/send", answer{status: 502})
	m := b.req("k-msg", senders.Message, annByID)
	m.Body = "Thanks for connecting, Ann!"
	_, err = b.tr.Perform(ctx, m)
	is.True(err != nil)
	_, isTE = senders.AsTransportError(err)
	is.True(!isTE)
	b.fake.calls()
	res, found, err = b.tr.Lookup(ctx, m)
	is.NoErr(err)
	is.True(found)
	is.Equal(res.ProviderMessageID, "chat-ann-1/msg-ann-1")
	is.Equal(routes(b.fake.calls()), []string{"GET /v2/acc_ann/users/" + annID + "/chat", "GET /v2/acc_ann/chats/chat-ann-1/messages?limit=50"})

	// A message that never reached the conversation is not found: the
	// runner may send it. The conversation's earlier message with the
	// same text does not count: only what is newer than the thread does.
	b.fake.script("POST /v2/acc_ann/chats/chat-ann-1/messages/send", answer{status: 500})
	m2 := b.req("k-msg2", senders.Message, annByID)
	m2.Body, m2.Thread = "Thanks for connecting, Ann!", senders.Thread{Earlier: []string{"chat-ann-1/msg-ann-1"}}
	_, err = b.tr.Perform(ctx, m2)
	is.True(err != nil)
	b.fake.calls()
	_, found, err = b.tr.Lookup(ctx, m2)
	is.NoErr(err)
	is.True(!found)
	is.Equal(routes(b.fake.calls()), []string{"GET /v2/acc_ann/chats/chat-ann-1/messages?limit=50"})

	// A profile view is never looked for: viewing again is harmless.
	_, found, err = b.tr.Lookup(ctx, b.req("k-view", senders.ProfileView, ann))
	is.NoErr(err)
	is.True(!found)
	is.Equal(len(b.fake.calls()), 0)
}

// TestLookupAfterRestart: a transport that never saw the key (a new
// process) finds, from the request alone, the invitation and the message
// an earlier process sent before its answer was lost to a 5xx.
func TestLookupAfterRestart(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()
	inv := b.req("k-inv", senders.Invite, ann) // known by public identifier
	inv.Note = "Hi Ann!"
	m := b.req("k-msg", senders.Message, annByID)
	m.Body = "Thanks for connecting, Ann!"
	b.fake.script("POST /v2/acc_ann/users/me/relation-requests", answer{status: 503})
	b.fake.script("POST /v2/acc_ann/inboxes/CLASSIC_PRIMARY/chats/send", answer{status: 502})
	for _, r := range []senders.Request{inv, m} {
		_, err := b.tr.Perform(ctx, r)
		_, isTE := senders.AsTransportError(err)
		is.True(err != nil && !isTE) // unknown outcome
	}
	b.fake.calls()

	fresh := unipile.New(unipile.Config{Credentials: creds{"UNIPILE_API_KEY": apiKey}, Clock: b.clock,
		Logger: slog.New(slog.DiscardHandler), HTTPClient: b.fake.srv.Client()})
	res, found, err := fresh.Lookup(ctx, inv)
	is.NoErr(err)
	is.True(found)
	is.Equal(res.ProviderMessageID, "inv-7300000000000000001")
	is.Equal(res.At, time.Date(2026, 11, 2, 9, 15, 1, 0, time.UTC)) // the invitation's own time
	// The provider id is resolved as Perform resolves it.
	is.Equal(routes(b.fake.calls()), []string{"GET /v2/acc_ann/users/ann-lee-berlin", "GET /v2/acc_ann/users/me/relation-requests?limit=100&offset=0&type=sent"})

	res, found, err = fresh.Lookup(ctx, m)
	is.NoErr(err)
	is.True(found)
	is.Equal(res.ProviderMessageID, "chat-ann-1/msg-ann-1")
	is.Equal(res.At, time.Date(2026, 11, 2, 9, 15, 0, 0, time.UTC))

	// Found, the keys are known: performing them sends nothing.
	b.fake.calls()
	_, err = fresh.Perform(ctx, inv)
	is.NoErr(err)
	_, err = fresh.Perform(ctx, m)
	is.NoErr(err)
	is.Equal(len(b.fake.calls()), 0)

	// Another lead's invitation is not Ann's.
	_, found, err = fresh.Lookup(ctx, b.req("k-cy", senders.Invite, senders.Recipient{LeadID: "lead-cy", ProviderID: "ACoAACy000000000000000000000000000000000"}))
	is.NoErr(err)
	is.True(!found)
	// A Unipile that does not answer leaves the outcome unknown.
	b.fake.script("GET /v2/acc_ann/users/me/relation-requests", answer{status: 500})
	_, found, err = fresh.Lookup(ctx, b.req("k-cy", senders.Invite, senders.Recipient{LeadID: "lead-cy", ProviderID: "ACoAACy000000000000000000000000000000000"}))
	is.True(err != nil)
	is.True(!found)
}

// TestParseWebhook: each event type taken, and the reports' matches.
func TestParseWebhook(t *testing.T) {
	is := is.New(t)
	acc, in, err := unipile.ParseWebhook(testdata(t, "webhook_message_new.json"))
	is.NoErr(err)
	is.Equal(acc, "acc_ann")
	is.Equal(len(in), 1)
	is.Equal(in[0].Kind, senders.InboundReply)
	is.Equal(in[0].ProviderMessageID, "chat-ann-1/msg-ann-3")
	is.Equal(in[0].Body, "Thanks, happy to talk on Thursday.")
	is.Equal(in[0].Match.ProviderID, annID)
	is.Equal(in[0].At, time.Date(2026, 11, 2, 10, 5, 0, 0, time.UTC))

	_, in, err = unipile.ParseWebhook(testdata(t, "webhook_relation_accept.json"))
	is.NoErr(err)
	is.Equal(len(in), 1)
	is.Equal(in[0].Kind, senders.InboundAccepted)
	is.Equal(in[0].Match.ProviderID, annID)
	is.Equal(in[0].At, time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC))

	is.Equal(in[0].Match.Invitation, "inv-7300000000000000001") // leadline's own invitation, when no id a lead holds matches

	// The other name of an acceptance; the public identifier comes as
	// leads keep it, lower-case.
	_, in, err = unipile.ParseWebhook(testdata(t, "webhook_relation_new.json"))
	is.NoErr(err)
	is.Equal(len(in), 1)
	is.Equal(in[0].Kind, senders.InboundAccepted)
	is.Equal(*in[0].Match, senders.Match{ProviderID: "ACoAABo00000000000000000000000000000000", PublicIdentifier: "bo-chen", Invitation: "inv-7300000000000000002"})

	// A reply is matched by who wrote it, then by the conversation.
	_, in, _ = unipile.ParseWebhook(testdata(t, "webhook_message_new.json"))
	is.Equal(in[0].Match.Conversation, "chat-ann-1")

	for _, f := range []string{"webhook_account_disconnected.json", "webhook_account_errored.json"} {
		_, in, err = unipile.ParseWebhook(testdata(t, f))
		is.NoErr(err)
		is.Equal(len(in), 1)
		is.Equal(in[0].Kind, senders.InboundSignal)
		is.Equal(in[0].Signal, senders.SignalAccountDisconnected)
	}

	// Values no lead can hold: refused, never taken.
	msg := string(testdata(t, "webhook_message_new.json"))
	for _, bad := range []string{
		strings.Replace(msg, `"sender_id": "ACo`, `"sender_id": "\u0000ACo`, 1),
		strings.Replace(msg, `"chat_id": "chat-ann-1"`, `"chat_id": "chat\u0007"`, 1),
		strings.Replace(msg, `"id": "msg-ann-3"`, `"id": "`+strings.Repeat("m", 201)+`"`, 1),
		strings.Replace(msg, `"text": "Thanks`, `"text": "\u0000Thanks`, 1),
		strings.Replace(string(testdata(t, "webhook_relation_new.json")), `"Bo-Chen"`, `"bo\nchen"`, 1),
	} {
		is.True(bad != msg)
		_, _, err = unipile.ParseWebhook([]byte(bad))
		is.True(errors.Is(err, unipile.ErrInvalidEvent))
	}

	// The sender's own message, and events leadline does not take, report
	// nothing; a body that is no event is an error.
	own := strings.Replace(string(testdata(t, "webhook_message_new.json")), `"is_sender": false`, `"is_sender": true`, 1)
	_, in, err = unipile.ParseWebhook([]byte(own))
	is.NoErr(err)
	is.Equal(len(in), 0)
	_, in, err = unipile.ParseWebhook([]byte(`{"id":"e","account_id":"acc_ann","type":"message.receipt.read","payload":{}}`))
	is.NoErr(err)
	is.Equal(len(in), 0)
	_, _, err = unipile.ParseWebhook([]byte(`not json`))
	is.True(err != nil)
	_, _, err = unipile.ParseWebhook([]byte(`{"type":"message.new"}`))
	is.True(err != nil)
}

// TestVerifyWebhook: the documented signature, and every way it fails.
func TestVerifyWebhook(t *testing.T) {
	is := is.New(t)
	body := testdata(t, "webhook_message_new.json")
	now := time.Date(2026, 11, 2, 10, 5, 2, 0, time.UTC)
	h := func(v string) http.Header {
		out := http.Header{}
		if v != "" {
			out.Set(unipile.SignatureHeader, v)
		}
		return out
	}
	is.NoErr(unipile.VerifyWebhook("whsec", h(unipile.Sign("whsec", body, now.Add(-time.Minute))), body, now))
	// Several v0 values (a rotated secret): one that matches is enough.
	both := unipile.Sign("old", body, now) + ",v0=" + strings.SplitN(unipile.Sign("whsec", body, now), "v0=", 2)[1]
	is.NoErr(unipile.VerifyWebhook("whsec", h(both), body, now))
	for name, c := range map[string]struct {
		secret, header string
		body           []byte
		want           error
	}{
		"unsigned":     {"whsec", "", body, unipile.ErrUnsigned},
		"wrong secret": {"whsec", unipile.Sign("other", body, now), body, unipile.ErrBadSignature},
		"tampered":     {"whsec", unipile.Sign("whsec", body, now), append([]byte("{} "), body...), unipile.ErrBadSignature},
		"stale":        {"whsec", unipile.Sign("whsec", body, now.Add(-6*time.Minute)), body, unipile.ErrStale},
		"from ahead":   {"whsec", unipile.Sign("whsec", body, now.Add(6*time.Minute)), body, unipile.ErrStale},
		"garbled":      {"whsec", "t=abc,v0=zz", body, unipile.ErrBadSignature},
		"no secret":    {"", unipile.Sign("", body, now), body, unipile.ErrNoSecret},
	} {
		if err := unipile.VerifyWebhook(c.secret, h(c.header), c.body, now); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", name, err, c.want)
		}
	}
}

// TestPolling: the senders the transport worked for are polled for new
// relations and for replies in every conversation with news, whoever
// started it, with the webhooks' ProviderMessageIDs and dedupe keys.
func TestPolling(t *testing.T) {
	is := is.New(t)
	b := setup(t, false)
	ctx := context.Background()
	_, err := b.tr.Perform(ctx, b.req("k-view", senders.ProfileView, ann))
	is.NoErr(err)
	b.fake.calls()

	// The first poll of a process reads a day back (a restart loses
	// nothing); the chats are read until one has no news.
	until := time.Date(2026, 11, 2, 10, 10, 0, 0, time.UTC)
	in, err := b.tr.Inbound(ctx, until)
	is.NoErr(err)
	is.Equal(routes(b.fake.calls()), []string{"GET /v2/accounts/acc_ann", "GET /v2/acc_ann/users/me/relations?limit=100",
		"GET /v2/acc_ann/chats?limit=100",
		"GET /v2/acc_ann/chats/chat-ann-1/messages?after=2026-11-01T09%3A00%3A00.000Z&limit=100",
		"GET /v2/acc_ann/chats/chat-bob-2/messages?after=2026-11-01T09%3A00%3A00.000Z&limit=100"})
	is.Equal(len(in), 3) // Ann's relation (not the old one), her reply (not the sender's message), Bob's reply
	is.Equal(in[0].Kind, senders.InboundAccepted)
	is.Equal(in[0].SenderID, b.sender.ID)
	is.Equal(in[0].Match.ProviderID, annID)
	is.Equal(in[1].Kind, senders.InboundReply)
	is.Equal(in[1].SenderID, b.sender.ID)
	is.Equal(in[1].ProviderMessageID, "chat-ann-1/msg-ann-3")
	// A conversation leadline did not start (Bob answered an invitation's
	// note) is polled too.
	is.Equal(in[2].Kind, senders.InboundReply)
	is.Equal(in[2].ProviderMessageID, "chat-bob-2/msg-bob-7")
	is.Equal(in[2].Match.ProviderID, "ACoAAOther00000000000000000000000000000")

	// The same reply by webhook has the same ProviderMessageID and dedupe
	// key: the queue and the inbox take it once.
	_, hooked, err := unipile.ParseWebhook(testdata(t, "webhook_message_new.json"))
	is.NoErr(err)
	is.Equal(hooked[0].ProviderMessageID, in[1].ProviderMessageID)
	is.Equal(unipile.Dedupe("acc_ann", hooked[0]), unipile.Dedupe("acc_ann", in[1]))
	_, hooked, _ = unipile.ParseWebhook(testdata(t, "webhook_relation_accept.json"))
	is.Equal(unipile.Dedupe("acc_ann", hooked[0]), unipile.Dedupe("acc_ann", in[0]))

	// Not due again before PollEvery; then only what is newer: the chats'
	// news are all older than the cursor, so no conversation is read.
	in, err = b.tr.Inbound(ctx, until.Add(time.Minute))
	is.NoErr(err)
	is.Equal(len(in), 0)
	is.Equal(len(b.fake.calls()), 0)
	in, err = b.tr.Inbound(ctx, until.Add(unipile.DefaultPollEvery))
	is.NoErr(err)
	is.Equal(len(in), 0)
	is.Equal(routes(b.fake.calls()), []string{"GET /v2/accounts/acc_ann", "GET /v2/acc_ann/users/me/relations?limit=100", "GET /v2/acc_ann/chats?limit=100"})
}

// TestPollingSignalsAndSink: a disconnected account is signalled; with a
// sink, what polling finds is pushed under the webhooks' dedupe keys.
func TestPollingSignalsAndSink(t *testing.T) {
	is := is.New(t)
	b := setup(t, true)
	ctx := context.Background()
	_, err := b.tr.Perform(ctx, b.req("k-inv", senders.Invite, annByID))
	is.NoErr(err)
	// The account answers 401 provider/invalid_authorization.
	b.fake.script("GET /v2/accounts/acc_ann", answer{status: 401, file: "error_401_disconnected.json"})
	until := time.Date(2026, 11, 2, 10, 10, 0, 0, time.UTC)
	in, err := b.tr.Inbound(ctx, until)
	is.NoErr(err)
	is.Equal(len(in), 0) // pushed, not returned
	is.Equal(len(b.sink.order), 1)
	for _, got := range b.sink.pushed {
		is.Equal(got.Kind, senders.InboundSignal)
		is.Equal(got.Signal, senders.SignalAccountDisconnected)
		is.Equal(got.SenderID, b.sender.ID)
	}
	// Next poll: the account is running again, Ann accepted.
	in, err = b.tr.Inbound(ctx, until.Add(unipile.DefaultPollEvery))
	is.NoErr(err)
	is.Equal(len(in), 0)
	_, hooked, _ := unipile.ParseWebhook(testdata(t, "webhook_relation_accept.json"))
	pushed, fresh := b.sink.pushed["ws-1|unipile|"+unipile.Dedupe("acc_ann", hooked[0])]
	is.True(fresh)
	is.Equal(pushed.Kind, senders.InboundAccepted)
}

// TestCheckAndProbe: the account's status as `leadline senders check`
// shows it and as the runner's hourly probe reads it.
func TestCheckAndProbe(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		keyEnv  string
		answers []answer
		steps   []bool // OK of each step
		says    string // the last step's detail contains it
		signal  string // Probe's signal; "" for nil
	}{
		"running":           {"", nil, []bool{true, true, true, true}, "running", ""},
		"key unset":         {"UNSET_KEY", nil, []bool{true, false}, "set UNSET_KEY", senders.SignalCredentialsMissing},
		"key refused":       {"WRONG_KEY", nil, []bool{true, true, false}, "Check the key in WRONG_KEY", senders.SignalAuthFailed},
		"disconnected":      {"", []answer{{status: 200, file: "account_disconnected.json"}}, []bool{true, true, true, false}, "reconnect the account", senders.SignalAccountDisconnected},
		"session lost, 401": {"", []answer{{status: 401, file: "error_401_disconnected.json"}}, []bool{true, true, true, false}, "reconnect the account", senders.SignalAccountDisconnected},
		"no such account":   {"", []answer{{status: 404, body: problemBody(404, "api/resource_not_found", "Not found")}}, []bool{true, true, false}, "check account_id", senders.SignalAccountNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			b := setup(t, false)
			if c.keyEnv != "" {
				b.sender.Settings = (&unipile.Account{AccountID: "acc_ann", APIKeyEnv: c.keyEnv, BaseURL: b.fake.srv.URL + "/v2"}).Settings()
			}
			// Each answer twice: once for Check, once for Probe.
			for _, a := range c.answers {
				b.fake.script("GET /v2/accounts/acc_ann", a, a)
			}
			steps := b.tr.Check(ctx, b.sender)
			var oks []bool
			for _, st := range steps {
				oks = append(oks, st.OK)
				is.True(!strings.Contains(st.Detail, apiKey)) // never the key
			}
			is.Equal(oks, c.steps)
			is.True(strings.Contains(steps[len(steps)-1].Detail, c.says))

			err := b.tr.Probe(ctx, b.sender)
			switch {
			case c.signal == "" && name == "running":
				is.NoErr(err)
			case c.signal == "":
				is.True(err != nil)
			default:
				is.Equal(transportError(t, err).Signal, c.signal)
			}
		})
	}
	// Without settings, the first step says what to add.
	is := is.New(t)
	b := setup(t, false)
	b.sender.Settings = senders.Settings{}
	steps := b.tr.Check(ctx, b.sender)
	is.Equal(len(steps), 1)
	is.True(!steps[0].OK)
	is.True(strings.Contains(steps[0].Detail, "account_id and api_key_env"))
	is.True(b.tr.Probe(ctx, b.sender) != nil)
}
