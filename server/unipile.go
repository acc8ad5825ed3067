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
	"github.com/leadline/leadline/transports/unipile"
)

// maxUnipileBody bounds a Unipile webhook's body.
const maxUnipileBody = 1 << 20

// unipileReceived documents the answer to a Unipile webhook.
type unipileReceived struct {
	Data struct {
		Reports int `json:"reports" doc:"What the event reports that leadline takes (a reply, an accepted invitation, the account's status): 0 or 1; other event types are accepted and ignored."`
		Queued  int `json:"queued" doc:"How many of them this delivery queued; 0 for a replay of one already queued."`
	} `json:"data"`
}

// registerUnipile mounts POST /inbound/unipile and documents it.
func (s *Server) registerUnipile() {
	s.mux.HandleFunc("POST /inbound/unipile", s.inboundUnipile)
	s.api.OpenAPI().Components.SecuritySchemes["unipileSignature"] = &huma.SecurityScheme{Type: "apiKey", In: "header", Name: unipile.SignatureHeader,
		Description: "Unipile's t=<unix seconds>,v0=<hex HMAC-SHA256 of t.body> under the webhook endpoint's secret (the sender's webhook_secret_env), within 5 minutes of now."}
	errorResponse := func(doc string) *huma.Response {
		return &huma.Response{Description: doc, Content: map[string]*huma.MediaType{"application/json": {
			Schema: s.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ErrorBody](), true, "")}}}
	}
	s.api.OpenAPI().AddOperation(&huma.Operation{
		OperationID: "receive-unipile-webhook", Method: http.MethodPost, Path: "/inbound/unipile",
		Tags: []string{"Senders"}, Summary: "Receive Unipile's webhook",
		Description: "Point Unipile's webhook endpoint (events `message.new`, `relation.request.accept` or `relation.new`, " +
			"`account.status.disconnected`, `account.status.errored`, `account.status.running`) here. No API key: the signature over the body, " +
			"checked with a unipile sender's webhook secret before anything else is read, is the credential, and the event's `account_id` " +
			"names the sender. Every request no secret verifies gets the same 401, naming nothing. A verified event for an account no sender " +
			"has is acknowledged (200, nothing queued) and logged. What the event reports is queued in the request, once per " +
			"message, relation or status change, and recorded by a worker.",
		Security: []map[string][]string{{"unipileSignature": {}}},
		Parameters: []*huma.Param{{Name: unipile.SignatureHeader, In: "header", Description: "Unipile's `t=…,v0=…` signature.",
			Schema: &huma.Schema{Type: huma.TypeString}}},
		RequestBody: &huma.RequestBody{Required: true, Description: "Unipile's event as it sent it, up to 1 MiB.",
			Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: huma.TypeObject}}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "Received.", Content: map[string]*huma.MediaType{"application/json": {
				Schema: s.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[unipileReceived](), true, "")}}},
			"401": errorResponse("E_UNAUTHORIZED, the same answer for every cause: unsigned, signed with a secret no unipile sender holds, signed more than 5 minutes from now, or a body over 1 MiB; nothing is recorded."),
			"402": errorResponse("E_PLAN_SUSPENDED: the sender's workspace is suspended; nothing is recorded."),
			"422": errorResponse("E_PAYLOAD_INVALID: a verified body that is not a Unipile event, or one whose values no lead can hold (an id over 200 characters or with a control character, text with NUL or invalid UTF-8)."),
			"500": errorResponse("E_INTERNAL: the event could not be queued; Unipile retries."),
		},
	})
}

// inboundUnipile takes Unipile's webhook: POST /inbound/unipile. The
// signature is checked before anything else is read of the body: with
// the secret of the sender whose account the event names, else with each
// other unipile sender's (an endpoint's secret may serve accounts leadline
// does not know). Every request that no secret verifies gets the same
// answer, which names no sender, account or workspace. A verified event
// for an account no sender has is acknowledged, so that Unipile stops
// sending it, and logged.
func (s *Server) inboundUnipile(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxUnipileBody+1))
	if err != nil || len(body) > maxUnipileBody {
		s.unverified(w, "the body could not be read or is over 1 MiB")
		return
	}
	snd, verified, err := s.unipileSigner(ctx, r.Header, body)
	if err != nil {
		s.logger.Error("unipile: inbound", "error", err)
		writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EInternal, "Try again; Unipile retries on its own.", "The event could not be recorded.")))
		return
	}
	if !verified {
		s.unverified(w, "no unipile sender's webhook secret verifies its signature")
		return
	}
	accountID, reports, err := unipile.ParseWebhook(body)
	if err != nil {
		detail := "The body is not a Unipile event (id, created_at, account_id, type, payload)."
		if errors.Is(err, unipile.ErrInvalidEvent) {
			detail = "The event holds a value leadline cannot keep: an id over 200 characters or with a control character, or text with a NUL character or invalid UTF-8."
		}
		writeEnvelope(w, fromAPI(apikit.Invalid(detail, "Point a Unipile webhook endpoint here and send its body as it is.")))
		return
	}
	var out unipileReceived
	if snd == nil || snd.Settings.Unipile.AccountID != accountID {
		// Signed with a secret leadline holds, about an account no sender
		// with that secret has: acknowledged, so that it is not retried.
		s.logger.Warn("unipile: a verified event for an account no sender has", "account_id", accountID)
		writeUnipileReceived(w, out)
		return
	}
	if ws, err := s.workspaces.WorkspaceByID(ctx, snd.WorkspaceID); err == nil && ws.Suspended {
		writeEnvelope(w, fromAPI(apikit.PlanSuspended()))
		return
	}
	out.Data.Reports = len(reports)
	for _, in := range reports {
		in.SenderID = snd.ID
		fresh, err := s.inbound.PushReport(ctx, snd.WorkspaceID, unipile.Source, unipile.Dedupe(accountID, in), in)
		if err != nil {
			s.logger.Error("unipile: inbound", "sender", snd.Name, "error", err)
			writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EInternal, "Try again; Unipile retries on its own.", "The event could not be recorded.")))
			return
		}
		if fresh {
			out.Data.Queued++
		}
	}
	writeUnipileReceived(w, out)
}

func writeUnipileReceived(w http.ResponseWriter, out unipileReceived) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// unverified answers a webhook no secret verifies: one answer for every
// reason, naming nothing leadline holds; the reason goes to the log.
func (s *Server) unverified(w http.ResponseWriter, why string) {
	s.logger.Info("unipile: webhook refused", "reason", why)
	writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EUnauthorized,
		"Point a Unipile webhook endpoint here, set a unipile sender's webhook_secret_env to that endpoint's secret and restart; check that this server's clock is right.",
		"The webhook could not be verified.")))
}

// unipileSigner returns the unipile sender whose webhook secret verifies
// the body's signature: first the sender of the account the body claims,
// then, once per distinct secret, every other. verified is false when
// none does. The body is read for its claim alone, never trusted before
// the signature holds.
func (s *Server) unipileSigner(ctx context.Context, h http.Header, body []byte) (*senders.Sender, bool, error) {
	ss, err := s.senders.UnipileSenders(ctx)
	if err != nil {
		return nil, false, err
	}
	var claim struct {
		AccountID string `json:"account_id"`
	}
	_ = json.Unmarshal(body, &claim)
	slices.SortStableFunc(ss, func(a, b *senders.Sender) int {
		return cmpBool(a.Settings.Unipile.AccountID == claim.AccountID, b.Settings.Unipile.AccountID == claim.AccountID)
	})
	now := s.clock.Now()
	tried := map[string]bool{}
	for _, snd := range ss {
		name := snd.Settings.Unipile.WebhookSecretEnv
		if name == "" {
			continue
		}
		secret := s.webhookSecret(ctx, snd, name)
		if secret == "" || tried[secret] {
			continue
		}
		tried[secret] = true
		if unipile.VerifyWebhook(secret, h, body, now) != nil {
			continue
		}
		// The sender of the account, if one with this secret has it.
		for _, o := range ss {
			if o.Settings.Unipile.AccountID == claim.AccountID && o.Settings.Unipile.WebhookSecretEnv != "" {
				if s.webhookSecret(ctx, o, o.Settings.Unipile.WebhookSecretEnv) == secret {
					return o, true, nil
				}
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
