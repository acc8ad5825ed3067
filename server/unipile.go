package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
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
		Description: "Point Unipile's webhook endpoint (events `message.new`, `relation.request.accept`, `account.status.disconnected`, " +
			"`account.status.running`) here. No API key: the event's `account_id` names the unipile sender, and the signature over the body, " +
			"checked with that sender's webhook secret, is the credential. What the event reports is queued in the request, once per " +
			"message, relation or status change, and recorded by a worker.",
		Security: []map[string][]string{{"unipileSignature": {}}},
		Parameters: []*huma.Param{{Name: unipile.SignatureHeader, In: "header", Description: "Unipile's `t=…,v0=…` signature.",
			Schema: &huma.Schema{Type: huma.TypeString}}},
		RequestBody: &huma.RequestBody{Required: true, Description: "Unipile's event as it sent it, up to 1 MiB.",
			Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: huma.TypeObject}}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "Received.", Content: map[string]*huma.MediaType{"application/json": {
				Schema: s.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[unipileReceived](), true, "")}}},
			"401": errorResponse("E_UNAUTHORIZED: unsigned, signed with another secret, or signed more than 5 minutes from now; nothing is recorded."),
			"402": errorResponse("E_PLAN_SUSPENDED: the sender's workspace is suspended; nothing is recorded."),
			"404": errorResponse("E_NOT_FOUND: no unipile sender has the event's account_id."),
			"422": errorResponse("E_PAYLOAD_INVALID: a body over 1 MiB or one that is not a Unipile event."),
			"500": errorResponse("E_INTERNAL: the event could not be queued; Unipile retries."),
		},
	})
}

// inboundUnipile takes Unipile's webhook: POST /inbound/unipile. The
// event names its account; the unipile sender with that account_id gives
// the secret (through its webhook_secret_env) the signature is checked
// with. Nothing is queued before the signature holds.
func (s *Server) inboundUnipile(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxUnipileBody+1))
	if err != nil || len(body) > maxUnipileBody {
		writeEnvelope(w, fromAPI(apikit.Invalid("The body could not be read or is over 1 MiB.", "Send Unipile's webhook as it is.")))
		return
	}
	accountID, reports, err := unipile.ParseWebhook(body)
	if err != nil {
		writeEnvelope(w, fromAPI(apikit.Invalid("The body is not a Unipile event (id, created_at, account_id, type, payload).",
			"Point a Unipile webhook endpoint here and send its body as it is.")))
		return
	}
	ctx := r.Context()
	snd, err := s.senders.SenderByUnipileAccount(ctx, accountID)
	if apikit.ErrorCode(err) == apikit.ENotFound {
		writeNotFound(w, "Unipile account "+accountID, "Name the account in a unipile sender's settings (unipile: account_id) and apply the setup file.")
		return
	}
	if err != nil {
		s.logger.Error("unipile: inbound", "error", err)
		writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EInternal, "Try again; Unipile retries on its own.", "The event could not be recorded.")))
		return
	}
	secret := ""
	if name := snd.Settings.Unipile.WebhookSecretEnv; name != "" {
		secret, _ = s.credentials.Secret(ctx, snd, name)
	}
	if err := unipile.VerifyWebhook(secret, r.Header, body, s.clock.Now()); err != nil {
		remedy := "Check that the sender's webhook_secret_env holds the secret Unipile shows for the webhook endpoint, and that this server's clock is right."
		if errors.Is(err, unipile.ErrNoSecret) {
			remedy = "Set webhook_secret_env in the sender's unipile settings, and that variable to the webhook endpoint's secret, then restart."
		}
		writeEnvelope(w, fromAPI(apikit.Errorf(apikit.EUnauthorized, remedy, "The Unipile webhook for sender %s could not be verified: %s.", snd.Name, reason(err))))
		return
	}
	if ws, err := s.workspaces.WorkspaceByID(ctx, snd.WorkspaceID); err == nil && ws.Suspended {
		writeEnvelope(w, fromAPI(apikit.PlanSuspended()))
		return
	}
	var out unipileReceived
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
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// reason says why a signature failed, without the signature.
func reason(err error) string {
	switch {
	case errors.Is(err, unipile.ErrUnsigned):
		return "it carries no " + unipile.SignatureHeader + " header"
	case errors.Is(err, unipile.ErrStale):
		return "it was signed more than 5 minutes from now"
	case errors.Is(err, unipile.ErrNoSecret):
		return "no webhook secret is set for it"
	}
	return "the signature does not match"
}
