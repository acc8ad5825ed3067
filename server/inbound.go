package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
)

// maxInboundBody bounds a provider webhook's body.
const maxInboundBody = 1 << 20

// inboundReceived documents the answer to a provider's webhook.
type inboundReceived struct {
	Data struct {
		Reports int `json:"reports" doc:"What the event reports that leadline takes (a reply, an accepted invitation, the account's status): 0 or 1; other event types are accepted and ignored."`
		Queued  int `json:"queued" doc:"How many of them this delivery queued; 0 for a replay of one already queued."`
	} `json:"data"`
}

// registerInbound mounts POST /inbound/<kind> for every transport whose
// provider reports by webhook, and documents it.
func (s *Server) registerInbound() {
	for _, pl := range senders.Plugins() {
		if pl.Webhook != nil {
			s.registerWebhook(pl.Name, pl.Webhook)
		}
	}
}

func (s *Server) registerWebhook(kind string, wh *senders.Webhook) {
	path, doc := "/inbound/"+kind, wh.Doc
	s.mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) { s.receiveWebhook(w, r, kind, wh) })
	scheme := kind + "Signature"
	s.api.OpenAPI().Components.SecuritySchemes[scheme] = &huma.SecurityScheme{Type: "apiKey", In: "header", Name: doc.SignatureHeader,
		Description: doc.Signature}
	errorResponse := func(doc string) *huma.Response {
		return &huma.Response{Description: doc, Content: map[string]*huma.MediaType{"application/json": {
			Schema: s.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ErrorBody](), true, "")}}}
	}
	s.api.OpenAPI().AddOperation(&huma.Operation{
		OperationID: doc.OperationID, Method: http.MethodPost, Path: path,
		Tags: []string{"Senders"}, Summary: doc.Summary,
		Description: doc.Description + " No API key: the signature over the body, " +
			"checked with a " + kind + " sender's webhook secret before anything else is read, is the credential, and the event's account " +
			"names the sender. Every request no secret verifies gets the same 401, naming nothing. A verified event for an account no sender " +
			"has is acknowledged (200, nothing queued) and logged. What the event reports is queued in the request, once per " +
			"message, relation or status change, and recorded by a worker.",
		Security: []map[string][]string{{scheme: {}}},
		Parameters: []*huma.Param{{Name: doc.SignatureHeader, In: "header", Description: doc.Provider + "'s signature.",
			Schema: &huma.Schema{Type: huma.TypeString}}},
		RequestBody: &huma.RequestBody{Required: true, Description: doc.Provider + "'s event as it sent it, up to 1 MiB.",
			Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: huma.TypeObject}}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "Received.", Content: map[string]*huma.MediaType{"application/json": {
				Schema: s.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[inboundReceived](), true, "")}}},
			"401": errorResponse("E_UNAUTHORIZED, the same answer for every cause: unsigned, signed with a secret no " + kind + " sender holds, signed more than 5 minutes from now, or a body over 1 MiB; nothing is recorded."),
			"402": errorResponse("E_PLAN_SUSPENDED: the sender's workspace is suspended; nothing is recorded."),
			"422": errorResponse("E_PAYLOAD_INVALID: a verified body that is not a " + doc.Provider + " event, or one whose values no lead can hold (an id over 200 characters or with a control character, text with NUL or invalid UTF-8)."),
			"500": errorResponse("E_INTERNAL: the event could not be queued; " + doc.Provider + " retries."),
		},
	})
}

// receiveWebhook takes a provider's webhook: POST /inbound/<kind>. The signature
// is checked before anything else is read of the body: with the secret of
// the sender whose account the event names, else with each other sender's
// of the kind (an endpoint's secret may serve accounts leadline does not
// know). Every request that no secret verifies gets the same answer, which
// names no sender, account or workspace. A verified event for an account
// no sender has is acknowledged, so that the provider stops sending it,
// and logged.
func (s *Server) receiveWebhook(w http.ResponseWriter, r *http.Request, kind string, wh *senders.Webhook) {
	ctx := r.Context()
	provider := wh.Doc.Provider
	internal := func() {
		writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EInternal, "Try again; "+provider+" retries on its own.", "The event could not be recorded.")))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxInboundBody+1))
	if err != nil || len(body) > maxInboundBody {
		s.unverified(w, kind, provider, "the body could not be read or is over 1 MiB")
		return
	}
	snd, verified, err := s.signer(ctx, kind, wh, r.Header, body)
	if err != nil {
		s.logger.Error(kind+": inbound", "error", err)
		internal()
		return
	}
	if !verified {
		s.unverified(w, kind, provider, "no "+kind+" sender's webhook secret verifies its signature")
		return
	}
	accountID, reports, err := wh.Parse(body)
	if err != nil {
		detail := "The body is not a " + provider + " event."
		if errors.Is(err, senders.ErrInvalidReport) {
			detail = "The event holds a value leadline cannot keep: an id over 200 characters or with a control character, or text with a NUL character or invalid UTF-8."
		}
		writeEnvelope(w, fromAPI(apikit.Invalid(detail, "Point a "+provider+" webhook endpoint here and send its body as it is.")))
		return
	}
	var out inboundReceived
	if snd == nil || func() bool { acc, _ := wh.Account(snd.Settings); return acc != accountID }() {
		// Signed with a secret leadline holds, about an account no sender
		// with that secret has: acknowledged, so that it is not retried.
		s.logger.Warn(kind+": a verified event for an account no sender has", "account_id", accountID)
		writeInboundReceived(w, out)
		return
	}
	if ws, err := s.workspaces.WorkspaceByID(ctx, snd.WorkspaceID); err == nil && ws.Suspended {
		writeEnvelope(w, fromAPI(apikit.PlanSuspended()))
		return
	}
	out.Data.Reports = len(reports)
	for _, in := range reports {
		in.SenderID = snd.ID
		fresh, err := s.inbound.PushReport(ctx, snd.WorkspaceID, wh.Source, wh.Dedupe(accountID, in), in)
		if err != nil {
			s.logger.Error(kind+": inbound", "sender", snd.Name, "error", err)
			internal()
			return
		}
		if fresh {
			out.Data.Queued++
		}
	}
	writeInboundReceived(w, out)
}

func writeInboundReceived(w http.ResponseWriter, out inboundReceived) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// unverified answers a webhook no secret verifies: one answer for every
// reason, naming nothing leadline holds; the reason goes to the log.
func (s *Server) unverified(w http.ResponseWriter, kind, provider, why string) {
	s.logger.Info(kind+": webhook refused", "reason", why)
	writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EUnauthorized,
		"Point a "+provider+" webhook endpoint here, set a "+kind+" sender's webhook_secret_env to that endpoint's secret and restart; check that this server's clock is right.",
		"The webhook could not be verified.")))
}

// signer returns the sender of kind whose webhook secret verifies the
// body's signature: first the sender of the account the body claims,
// then, once per distinct secret, every other. verified is false when
// none does. The body is read for its claim alone, never trusted before
// the signature holds.
func (s *Server) signer(ctx context.Context, kind string, wh *senders.Webhook, h http.Header, body []byte) (*senders.Sender, bool, error) {
	all, err := s.senders.ByTransport(ctx, kind)
	if err != nil {
		return nil, false, err
	}
	type signed struct {
		snd             *senders.Sender
		account, secret string
	}
	var ss []signed
	for _, snd := range all {
		if acc, secret := wh.Account(snd.Settings); acc != "" {
			ss = append(ss, signed{snd, acc, secret})
		}
	}
	claim := wh.Claim(body)
	slices.SortStableFunc(ss, func(a, b signed) int { return cmpBool(a.account == claim, b.account == claim) })
	now := s.clock.Now()
	tried := map[string]bool{}
	for _, c := range ss {
		if c.secret == "" {
			continue
		}
		secret := s.webhookSecret(ctx, c.snd, c.secret)
		if secret == "" || tried[secret] {
			continue
		}
		tried[secret] = true
		if wh.Verify(secret, h, body, now) != nil {
			continue
		}
		// The sender of the account, if one with this secret has it.
		for _, o := range ss {
			if o.account == claim && o.secret != "" && s.webhookSecret(ctx, o.snd, o.secret) == secret {
				return o.snd, true, nil
			}
		}
		return nil, true, nil
	}
	return nil, false, nil
}

// secretTTL is how long a webhook secret read is kept.
const secretTTL = time.Minute

// secretCache holds webhook secrets read, by sender and name, with when
// they were read ("" for one that is not set).
type secretCache struct {
	mu   sync.Mutex
	byID map[string]cachedSecret
}

type cachedSecret struct {
	value string
	at    time.Time
}

// webhookSecret returns the sender's secret name, "" when it is not set,
// read at most once a minute.
func (s *Server) webhookSecret(ctx context.Context, snd *senders.Sender, name string) string {
	key, now := snd.ID+"/"+name, s.clock.Now()
	c := &s.webhookSecrets
	c.mu.Lock()
	got, ok := c.byID[key]
	c.mu.Unlock()
	if ok && now.Sub(got.at) < secretTTL && !now.Before(got.at) {
		return got.value
	}
	value, err := s.credentials.Secret(ctx, snd, name)
	if err != nil {
		value = ""
	}
	c.mu.Lock()
	if c.byID == nil || len(c.byID) > 10000 {
		c.byID = map[string]cachedSecret{}
	}
	c.byID[key] = cachedSecret{value: value, at: now}
	c.mu.Unlock()
	return value
}

// cmpBool orders true before false.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
