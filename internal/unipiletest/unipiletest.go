// Package unipiletest is a stand-in for Unipile's API version 2 on
// loopback, with state: LinkedIn accounts, the members they reach, the
// invitations they send and the conversations they hold. It answers the
// requests leadline's unipile transport makes with the shapes Unipile's v2
// reference and its official SDK document (transports/unipile/testdata
// holds one example of each, with the page it follows), and lets a test
// act for the other side: a member accepts an invitation or replies, an
// account disconnects, LinkedIn refuses one member or stops answering.
// What a webhook would tell is returned as the event's body, for the test
// to deliver or not (polling then has to find it). docs/TRANSPORTS.md
// lists what the documentation left open.
package unipiletest

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
)

// Server is the stand-in. It is safe for concurrent use.
type Server struct {
	// URL is the API's base URL, with its /v2 path: a sender's base_url.
	URL string
	// Key is the API key it takes (X-API-KEY).
	Key string

	srv   *httptest.Server
	clock apikit.Clock

	mu       sync.Mutex
	accounts map[string]*account
	members  map[string]*Member // by provider id
	faults   []fault
	requests []Request
	seq      int
	relTimes bool
}

// Member is a LinkedIn member the accounts can reach.
type Member struct {
	ProviderID       string
	PublicIdentifier string
	FirstName        string
	LastName         string
	Headline         string
	// Inaccessible: LinkedIn refuses every request about the member with
	// 403 provider/insufficient_permissions ("This profile can't be
	// accessed"), as it does for some profiles.
	Inaccessible bool
}

// Request is one request the server received.
type Request struct {
	Method, Path string
	Query        string
	Body         map[string]any
}

// Invitation is an invitation an account sent.
type Invitation struct {
	ID, MemberID, Message string
	CreatedAt             time.Time
	// State is "pending", "accepted" or "withdrawn".
	State string
}

// Message is a message of a conversation.
type Message struct {
	ID, ChatID, SenderID, Text string
	At                         time.Time
	// Mine: the account wrote it.
	Mine bool
}

type account struct {
	id, status  string
	broken      bool
	invitations []*Invitation
	relations   []relation
	chats       []*chat
}

type relation struct {
	memberID string
	at       time.Time
}

type chat struct {
	id, memberID string
	inmail       bool
	messages     []Message
}

type fault struct {
	method, path string // path prefix after /v2, "" for any
	status       int
	typ, detail  string
	hangUp       bool
	left         int
}

// New starts a server on loopback, over TLS as Unipile is reached, with
// one API key; its clock stamps invitations, relations and messages. It
// stops when the test ends. Client trusts it.
func New(t interface{ Cleanup(func()) }, clock apikit.Clock, key string) *Server {
	s := &Server{Key: key, clock: clock, accounts: map[string]*account{}, members: map[string]*Member{}, relTimes: true}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// A client that hangs up (a test's end, a cut connection) is no news.
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + "/v2"
	return s
}

// Client returns an HTTP client that trusts the server's certificate.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// AddAccount adds a LinkedIn account, running.
func (s *Server) AddAccount(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[id] = &account{id: id, status: "running"}
}

// SetStatus sets an account's status: running, disconnected, errored or
// paused. A disconnected account answers every request on its behalf
// with 401 provider/invalid_authorization, as Unipile documents.
func (s *Server) SetStatus(accountID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[accountID].status = status
}

// BreakSession makes every request on the account's behalf answer 401
// provider/invalid_authorization while Unipile still lists it with its
// status (running): LinkedIn ended the session before Unipile noticed.
func (s *Server) BreakSession(accountID string, broken bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[accountID].broken = broken
}

// AddMember adds a member every account can reach.
func (s *Server) AddMember(m Member) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members[m.ProviderID] = &m
}

// RelationTimes sets whether listed relations carry created_at, which
// Unipile documents as optional.
func (s *Server) RelationTimes(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.relTimes = on
}

// Fail makes the next n requests whose method is method (or any, "") and
// whose path after /v2 starts with path answer status with an error of
// type typ; status 0 closes the connection without an answer.
func (s *Server) Fail(method, path string, n, status int, typ, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{method: method, path: path, status: status, typ: typ, detail: detail, hangUp: status == 0, left: n})
}

// Requests returns the requests received since the last call.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.requests
	s.requests = nil
	return out
}

// Invitations returns the invitations an account sent, oldest first.
func (s *Server) Invitations(accountID string) []Invitation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Invitation
	for _, inv := range s.accounts[accountID].invitations {
		out = append(out, *inv)
	}
	return out
}

// Messages returns the messages of the account's conversation with a
// member, oldest first.
func (s *Server) Messages(accountID, memberID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	if c := s.accounts[accountID].chatWith(memberID); c != nil {
		out = append(out, c.messages...)
	}
	return out
}

// RelationEvent is the type of the event Accept returns:
// relation.request.accept, or relation.new (both have been used).
const (
	RelationAccept = "relation.request.accept"
	RelationNew    = "relation.new"
)

// Accept has the member accept the account's pending invitation: it
// leaves the pending list and the member becomes a relation. It returns
// the webhook event that tells it, of type eventType, whose payload is the
// invitation (a RelationRequest) with the member as its user; withPublic
// says whether the user carries its public identifier.
func (s *Server) Accept(accountID, memberID, eventType string, withPublic bool) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	a := s.accounts[accountID]
	var inv *Invitation
	for _, i := range a.invitations {
		if i.MemberID == memberID && i.State == "pending" {
			inv = i
		}
	}
	if inv == nil {
		panic("unipiletest: no pending invitation to " + memberID)
	}
	inv.State = "accepted"
	a.relations = append(a.relations, relation{memberID: memberID, at: now})
	m := s.members[memberID]
	u := map[string]any{"object": "User", "id": m.ProviderID, "type": "individual", "display_name": m.FirstName + " " + m.LastName}
	if withPublic {
		u["public_identifier"] = m.PublicIdentifier
	}
	return event(accountID, eventType, now, map[string]any{"object": "RelationRequest", "id": inv.ID, "type": "sent",
		"created_at": stamp(inv.CreatedAt), "user": u})
}

// Withdraw withdraws the account's pending invitation to the member (as
// its owner would by hand, or LinkedIn on expiry): it leaves the pending
// list without making a connection.
func (s *Server) Withdraw(accountID, memberID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range s.accounts[accountID].invitations {
		if i.MemberID == memberID && i.State == "pending" {
			i.State = "withdrawn"
		}
	}
}

// Reply has the member write text in the account's conversation with
// them, and returns the message.new event that tells it.
func (s *Server) Reply(accountID, memberID, text string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	c := s.accounts[accountID].chatWith(memberID)
	if c == nil {
		panic("unipiletest: no conversation with " + memberID)
	}
	m := Message{ID: s.next("msg"), ChatID: c.id, SenderID: memberID, Text: text, At: now}
	c.messages = append(c.messages, m)
	return event(accountID, "message.new", now, messageJSON(m))
}

func event(accountID, typ string, at time.Time, payload any) []byte {
	b, _ := json.Marshal(map[string]any{"id": "evt_" + strconv.FormatInt(at.UnixNano(), 36) + "_" + typ, "created_at": stamp(at),
		"account_id": accountID, "type": typ, "payload": payload})
	return b
}

func (s *Server) next(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s-%d", prefix, s.seq)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// problem writes Unipile's error answer (RFC 7807, type thrower/info).
func problem(w http.ResponseWriter, status int, typ, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "Error", "status": status, "type": typ,
		"title": http.StatusText(status), "detail": detail, "req_id": "req-test"})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	if len(body) > 0 {
		_ = json.Unmarshal(body, &req.Body)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	if r.Header.Get("X-API-KEY") != s.Key {
		problem(w, http.StatusUnauthorized, "api/missing_authorization", "The API key is missing or invalid.")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/v2")
	for i := range s.faults {
		f := &s.faults[i]
		if f.left > 0 && (f.method == "" || f.method == r.Method) && strings.HasPrefix(path, f.path) {
			f.left--
			if f.hangUp {
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					_ = conn.(net.Conn).Close()
				}
				return
			}
			problem(w, f.status, f.typ, f.detail)
			return
		}
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) == 2 && parts[0] == "accounts" {
		a, ok := s.accounts[parts[1]]
		if !ok {
			problem(w, http.StatusNotFound, "api/resource_not_found", "Account not found.")
			return
		}
		reply(w, http.StatusOK, map[string]any{"object": "Account", "id": a.id, "status": a.status, "provider": "linkedin",
			"user_id": "ACoAAMe0000000000000000000000000000000", "name": "Sales", "created_at": "2026-10-01T08:00:00.000Z", "application_id": "app_1"})
		return
	}
	a, ok := s.accounts[parts[0]]
	if !ok {
		problem(w, http.StatusNotFound, "api/resource_not_found", "Account not found.")
		return
	}
	if a.status == "disconnected" || a.broken {
		problem(w, http.StatusUnauthorized, "provider/invalid_authorization", "The account must be reconnected.")
		return
	}
	s.account(w, r, a, parts[1:], req.Body)
}

// account serves the methods called on behalf of an account.
func (s *Server) account(w http.ResponseWriter, r *http.Request, a *account, p []string, body map[string]any) {
	now := s.clock.Now()
	route := r.Method + " " + strings.Join(p, "/")
	q := r.URL.Query()
	switch {
	case route == "GET users/me/relations":
		rels := slices.Clone(a.relations)
		slices.Reverse(rels) // newest first
		var data []map[string]any
		for _, rel := range rels {
			m := s.members[rel.memberID]
			item := map[string]any{"object": "UserRelation", "id": "rel-" + rel.memberID, "user": userJSON(m)}
			if s.relTimes {
				item["created_at"] = stamp(rel.at)
			}
			data = append(data, item)
		}
		reply(w, http.StatusOK, page(data, q))
	case route == "GET users/me/relation-requests":
		var data []map[string]any
		for i := len(a.invitations) - 1; i >= 0; i-- {
			inv := a.invitations[i]
			if inv.State == "pending" {
				data = append(data, invitationJSON(inv, s.members[inv.MemberID]))
			}
		}
		reply(w, http.StatusOK, page(data, q))
	case r.Method == http.MethodPost && len(p) == 5 && strings.Join(p[:3], "/") == "users/me/relation-requests" && p[4] == "cancel":
		// Cancel a sent invitation: it leaves the pending list without
		// making a connection.
		for _, inv := range a.invitations {
			if inv.ID == p[3] && inv.State == "pending" {
				inv.State = "withdrawn"
				reply(w, http.StatusOK, map[string]any{"object": "RelationRequestCanceled"})
				return
			}
		}
		problem(w, http.StatusNotFound, "errors/resource_not_found", "No pending invitation with this id.")
	case route == "POST users/me/relation-requests":
		id, _ := body["user_id"].(string)
		m, ok := s.reach(w, id)
		if !ok {
			return
		}
		if a.connected(m.ProviderID) {
			problem(w, http.StatusUnprocessableEntity, "provider/unprocessable_entity", "The member is already a connection.")
			return
		}
		for _, inv := range a.invitations {
			if inv.MemberID == m.ProviderID && inv.State == "pending" {
				problem(w, http.StatusUnprocessableEntity, "provider/unprocessable_entity", "An invitation to this member is already pending.")
				return
			}
		}
		note, _ := body["message"].(string)
		inv := &Invitation{ID: s.next("inv"), MemberID: m.ProviderID, Message: note, CreatedAt: now, State: "pending"}
		a.invitations = append(a.invitations, inv)
		reply(w, http.StatusCreated, invitationJSON(inv, m))
	case route == "POST users/visit-profile":
		reply(w, http.StatusOK, map[string]any{"object": "ProfileVisited"})
	case r.Method == http.MethodPost && len(p) == 4 && p[0] == "users" && p[1] == "me" && p[2] == "follow":
		if _, ok := s.reach(w, p[3]); !ok {
			return
		}
		reply(w, http.StatusOK, map[string]any{"object": "RelationRequest", "id": s.next("follow"), "type": "sent"})
	case route == "POST inboxes/CLASSIC_PRIMARY/chats/send":
		ids, _ := body["users_ids"].([]any)
		if len(ids) != 1 {
			problem(w, http.StatusBadRequest, "api/invalid_parameters", "users_ids must name one user.")
			return
		}
		id, _ := ids[0].(string)
		m, ok := s.reach(w, id)
		if !ok {
			return
		}
		spec, _ := body["specifics"].(map[string]any)
		inmail := spec != nil
		if !inmail && !a.connected(m.ProviderID) {
			problem(w, http.StatusUnprocessableEntity, "provider/unprocessable_entity", "The recipient is not a connection.")
			return
		}
		c := &chat{id: s.next("chat"), memberID: m.ProviderID, inmail: inmail}
		a.chats = append(a.chats, c)
		text, _ := body["text"].(string)
		msg := Message{ID: s.next("msg"), ChatID: c.id, SenderID: "ACoAAMe0000000000000000000000000000000", Text: text, At: now, Mine: true}
		c.messages = append(c.messages, msg)
		reply(w, http.StatusOK, map[string]any{"object": "ChatStarted", "chat_id": c.id, "message_id": msg.ID})
	case r.Method == http.MethodPost && len(p) == 4 && p[0] == "chats" && p[2] == "messages" && p[3] == "send":
		c := a.chat(p[1])
		if c == nil {
			problem(w, http.StatusNotFound, "provider/resource_not_found", "Chat not found.")
			return
		}
		if m := s.members[c.memberID]; m != nil && m.Inaccessible {
			problem(w, http.StatusForbidden, "provider/insufficient_permissions", "This profile can't be accessed.")
			return
		}
		text, _ := body["text"].(string)
		msg := Message{ID: s.next("msg"), ChatID: c.id, SenderID: "ACoAAMe0000000000000000000000000000000", Text: text, At: now, Mine: true}
		c.messages = append(c.messages, msg)
		reply(w, http.StatusOK, map[string]any{"object": "MessageSent", "message_id": []string{msg.ID}})
	case r.Method == http.MethodGet && len(p) == 3 && p[0] == "chats" && p[2] == "messages":
		c := a.chat(p[1])
		if c == nil {
			problem(w, http.StatusNotFound, "provider/resource_not_found", "Chat not found.")
			return
		}
		after, _ := time.Parse(time.RFC3339Nano, q.Get("after"))
		var data []map[string]any
		for i := len(c.messages) - 1; i >= 0; i-- {
			if m := c.messages[i]; after.IsZero() || m.At.After(after) {
				data = append(data, messageJSON(m))
			}
		}
		reply(w, http.StatusOK, page(data, q))
	case route == "GET chats":
		chats := slices.Clone(a.chats)
		slices.SortStableFunc(chats, func(x, y *chat) int { return y.last().Compare(x.last()) })
		var data []map[string]any
		for _, c := range chats {
			data = append(data, map[string]any{"object": "Chat", "id": c.id, "user_id": c.memberID, "updated_at": stamp(c.last()),
				"last_message_timestamp": stamp(c.last())})
		}
		reply(w, http.StatusOK, page(data, q))
	case r.Method == http.MethodGet && len(p) == 3 && p[0] == "users" && p[2] == "chat":
		m, ok := s.reach(w, p[1])
		if !ok {
			return
		}
		data := []map[string]any{}
		for _, c := range a.chats {
			if c.memberID == m.ProviderID {
				data = append(data, map[string]any{"chat_id": c.id, "inbox_id": "CLASSIC_PRIMARY", "has_history": true})
			}
		}
		reply(w, http.StatusOK, map[string]any{"object": "ChatLookup", "data": data})
	case r.Method == http.MethodGet && len(p) == 2 && p[0] == "users":
		m, ok := s.reach(w, p[1])
		if !ok {
			return
		}
		distance := "SECOND_DEGREE"
		if a.connected(m.ProviderID) {
			distance = "FIRST_DEGREE"
		}
		reply(w, http.StatusOK, map[string]any{"object": "UserProfile", "id": m.ProviderID, "type": "individual", "provider": "linkedin",
			"public_identifier": m.PublicIdentifier, "first_name": m.FirstName, "last_name": m.LastName,
			"display_name": m.FirstName + " " + m.LastName, "description": m.Headline,
			"profile_url": "https://www.linkedin.com/in/" + m.PublicIdentifier, "following": false,
			"specifics": map[string]any{"member_id": "417" + m.ProviderID[len(m.ProviderID)-3:], "network_distance": distance,
				"notify_visit_token": "visit-" + m.PublicIdentifier}})
	default:
		problem(w, http.StatusNotFound, "api/resource_not_found", "No such method: "+route)
	}
}

// reach returns the member an identifier names (a provider id or a
// public identifier), or answers as LinkedIn does for one it cannot reach.
func (s *Server) reach(w http.ResponseWriter, id string) (*Member, bool) {
	m := s.members[id]
	if m == nil {
		for _, x := range s.members {
			if strings.EqualFold(x.PublicIdentifier, id) {
				m = x
			}
		}
	}
	if m == nil {
		problem(w, http.StatusNotFound, "provider/resource_not_found", "User not found.")
		return nil, false
	}
	if m.Inaccessible {
		problem(w, http.StatusForbidden, "provider/insufficient_permissions", "This profile can't be accessed.")
		return nil, false
	}
	return m, true
}

func (a *account) connected(memberID string) bool {
	return slices.ContainsFunc(a.relations, func(r relation) bool { return r.memberID == memberID })
}

func (a *account) chat(id string) *chat {
	for _, c := range a.chats {
		if c.id == id {
			return c
		}
	}
	return nil
}

// chatWith returns the account's latest conversation with a member.
func (a *account) chatWith(memberID string) *chat {
	var out *chat
	for _, c := range a.chats {
		if c.memberID == memberID {
			out = c
		}
	}
	return out
}

func (c *chat) last() time.Time {
	if len(c.messages) == 0 {
		return time.Time{}
	}
	return c.messages[len(c.messages)-1].At
}

func userJSON(m *Member) map[string]any {
	return map[string]any{"object": "User", "id": m.ProviderID, "type": "individual", "display_name": m.FirstName + " " + m.LastName,
		"public_identifier": m.PublicIdentifier, "profile_url": "https://www.linkedin.com/in/" + m.PublicIdentifier}
}

func invitationJSON(inv *Invitation, m *Member) map[string]any {
	out := map[string]any{"object": "RelationRequest", "id": inv.ID, "type": "sent", "created_at": stamp(inv.CreatedAt), "user": userJSON(m)}
	if inv.Message != "" {
		out["message"] = inv.Message
	}
	return out
}

func messageJSON(m Message) map[string]any {
	return map[string]any{"object": "Message", "id": m.ID, "chat_id": m.ChatID, "sender_id": m.SenderID, "text": m.Text,
		"timestamp": stamp(m.At), "is_sender": m.Mine, "is_event": false, "provider": "linkedin", "attachments": []any{}}
}

// page is a page of a list method: offset pagination with limit, as the
// lists leadline reads document.
func page(data []map[string]any, q map[string][]string) map[string]any {
	offset, _ := strconv.Atoi(first(q["offset"]))
	limit, _ := strconv.Atoi(first(q["limit"]))
	if limit <= 0 {
		limit = 100
	}
	offset = min(max(offset, 0), len(data))
	end := min(offset+limit, len(data))
	out := data[offset:end]
	if out == nil {
		out = []map[string]any{}
	}
	return map[string]any{"object": "List", "data": out, "next_cursor": nil}
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
