package server

import (
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
)

// documentTags are the document's top-level tags: every operation's tag,
// in the order a reader meets the product.
var documentTags = []*huma.Tag{
	{Name: "Meta", Description: "The key's own view: who it acts as, and the workspace's clients, stages, tags and lists."},
	{Name: "Leads", Description: "People to reach: create or update by email or LinkedIn, tag, stage, list, suppress, enrich and read their timeline."},
	{Name: "Senders", Description: "The LinkedIn accounts and mailboxes that send, their transports, budgets, warm-up and health."},
	{Name: "Sequences", Description: "Step graphs of LinkedIn and email actions, with their senders, activation and statistics."},
	{Name: "Enrollments", Description: "Leads in sequences: preview, then commit; pause, resume, stop and read why a lead is not being contacted."},
	{Name: "Inbox", Description: "Reply threads with their intent, assignment, review and replies sent from leadline."},
	{Name: "Tasks", Description: "Manual steps of sequences that a member does and marks done."},
	{Name: "Webhooks", Description: "Signed event deliveries to the workspace's endpoints, with their attempts and replays."},
	{Name: "Reports", Description: "Funnels, intents, costs, capacity and per-sequence statistics."},
	{Name: "Bookings", Description: "Meetings booked through Cal.com or Calendly, received by signed webhooks."},
}

// describeDocument fills in what the document says of itself: contact,
// licence, the default server, the default security (either form of API
// key) and the tags.
func describeDocument(oa *huma.OpenAPI) {
	oa.Info.Contact = &huma.Contact{Name: "leadline", URL: "https://github.com/leadline/leadline"}
	// The project names its licence in its repository.
	oa.Info.License = &huma.License{Name: "See the leadline repository", URL: "https://github.com/leadline/leadline"}
	oa.Servers = []*huma.Server{{URL: "http://127.0.0.1:8080", Description: "A leadline server run locally with `leadline serve`; replace it with your deployment's address."}}
	oa.Security = []map[string][]string{{"bearer": {}}, {"apiKey": {}}}
	oa.Tags = documentTags
}

// operation returns the registered operation at method and path.
func (s *Server) operation(method, path string) *huma.Operation {
	item := s.api.OpenAPI().Paths[path]
	if item == nil {
		return nil
	}
	switch method {
	case http.MethodGet:
		return item.Get
	case http.MethodPost:
		return item.Post
	case http.MethodPut:
		return item.Put
	case http.MethodPatch:
		return item.Patch
	case http.MethodDelete:
		return item.Delete
	}
	return nil
}

// documentAlso documents a second success status of an operation with the
// same body as an existing one.
func (s *Server) documentAlso(method, path, have, status, description string) {
	op := s.operation(method, path)
	r := *op.Responses[have]
	r.Description = description
	op.Responses[status] = &r
}

func intHeader(doc string) *huma.Header {
	return &huma.Header{Description: doc, Schema: &huma.Schema{Type: huma.TypeInteger}}
}

// headerComponents are the response headers leadline sends, declared
// once under components.headers and referenced by every answer that
// carries them, so that generated clients have one type for each.
var headerComponents = map[string]*huma.Header{
	"X-RateLimit-Limit":     intHeader("Calls per hour this key may make in the call's rate class."),
	"X-RateLimit-Remaining": intHeader("Calls left in the current window of that class."),
	"X-RateLimit-Reset":     intHeader("Unix seconds at which the window resets."),
	"Retry-After":           intHeader("Seconds until the hourly window resets."),
	"Idempotent-Replayed": {
		Description: "`true` when this is the stored answer to an earlier call with the same Idempotency-Key.",
		Schema:      &huma.Schema{Type: huma.TypeString, Enum: []any{"true"}},
	},
	"X-Request-Id": {
		Description: "The call's id: the request's own X-Request-Id when it sent one of 1 to 200 printable ASCII characters, a generated one otherwise. " +
			"Error envelopes repeat it as `request_id`, and the server's request log has it.",
		Required: true,
		Schema:   &huma.Schema{Type: huma.TypeString, MinLength: ptrInt(1), MaxLength: ptrInt(maxRequestID)},
	},
}

// headerRefs are references to the named header components.
func headerRefs(names ...string) map[string]*huma.Header {
	out := map[string]*huma.Header{}
	for _, n := range names {
		out[n] = &huma.Header{Ref: "#/components/headers/" + n}
	}
	return out
}

// rateLimitHeaders are on every answer to a call made with a valid key:
// every such call counts against a budget, whatever its answer.
var rateLimitHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}

// idempotencyKeyParam is the header every write accepts.
func idempotencyKeyParam() *huma.Param {
	return &huma.Param{
		Name: "Idempotency-Key", In: "header",
		Description: "Makes a retry safe: the same key with the same request returns the first answer again " +
			"(with `Idempotent-Replayed: true`) and runs nothing twice. 1 to 255 visible ASCII characters, such as a UUID; kept 24 hours per API key.",
		Schema: &huma.Schema{Type: huma.TypeString, MinLength: ptrInt(1), MaxLength: ptrInt(maxIdempotencyKey)},
	}
}

func ptrInt(n int) *int { return &n }

// documentHeaders adds the headers that guard reads and writes to a
// registered operation: Idempotency-Key on writes; the rate-limit headers
// on its answers but 401 and 402 (no valid key, no budget; a 500 after
// the count has them, one before it has not);
// Retry-After on 429; and, on writes, Idempotent-Replayed on every answer
// a replay can repeat (all but 401, 402, 429 and 500: a replay is counted
// and admitted first, and 5xx answers are not stored).
func (s *Server) documentHeaders(method, path string, class apikit.RateClass) {
	op := s.operation(method, path)
	if class != apikit.ClassRead {
		op.Parameters = append(op.Parameters, idempotencyKeyParam())
	}
	for code, r := range op.Responses {
		var names []string
		switch code {
		case "401", "402":
		case "500":
			names = append(names, rateLimitHeaders...)
		case "429":
			names = append(names, rateLimitHeaders...)
			names = append(names, "Retry-After")
		default:
			names = append(names, rateLimitHeaders...)
			if class != apikit.ClassRead {
				names = append(names, "Idempotent-Replayed")
			}
		}
		names = append(names, "X-Request-Id")
		copied := *r
		copied.Headers = maps.Clone(r.Headers)
		if copied.Headers == nil {
			copied.Headers = map[string]*huma.Header{}
		}
		maps.Copy(copied.Headers, headerRefs(names...))
		op.Responses[code] = &copied
	}
}

// documentRequestIDs declares the header components and X-Request-Id on
// every answer of every operation: withRequestLog sets it on them all.
func (s *Server) documentRequestIDs() {
	oa := s.api.OpenAPI()
	if oa.Components.Headers == nil {
		oa.Components.Headers = map[string]*huma.Header{}
	}
	maps.Copy(oa.Components.Headers, headerComponents)
	for _, item := range oa.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			for code, r := range op.Responses {
				copied := *r
				copied.Headers = maps.Clone(r.Headers)
				if copied.Headers == nil {
					copied.Headers = map[string]*huma.Header{}
				}
				maps.Copy(copied.Headers, headerRefs("X-Request-Id"))
				op.Responses[code] = &copied
			}
		}
	}
}

// bookingReceived documents the answer to a scheduling provider's webhook
// (inboundBooking).
type bookingReceived struct {
	Data struct {
		Booked    bool    `json:"booked" doc:"true when the webhook is a booking: it is queued and recorded once (however often the provider delivers it) by a worker within seconds; false for any other webhook, accepted and ignored so that the provider does not retry it."`
		BookingID string  `json:"booking_id,omitempty" doc:"The provider's booking id; only when booked."`
		LeadID    *string `json:"lead_id" format:"uuid" doc:"The lead whose email the invitee used, or null when no lead matched (the booking is kept, with no event); only when booked. A matched lead gets a meeting.booked event."`
		New       *bool   `json:"new,omitempty" doc:"Only when booked: true when this delivery queued the booking; false for a replay of one already queued or recorded, which records nothing new."`
	} `json:"data"`
}

// documentInbound adds the scheduling providers' webhook route, served by
// the mux outside huma (it reads the raw body for the signature), to the
// OpenAPI document.
func (s *Server) documentInbound() {
	reg := s.api.OpenAPI().Components.Schemas
	s.api.OpenAPI().Components.SecuritySchemes["calcomSignature"] = &huma.SecurityScheme{Type: "apiKey", In: "header", Name: "X-Cal-Signature-256",
		Description: "Cal.com's hex HMAC-SHA256 of the body under the workspace's Cal.com signing secret (the setup file's bookings:)."}
	s.api.OpenAPI().Components.SecuritySchemes["calendlySignature"] = &huma.SecurityScheme{Type: "apiKey", In: "header", Name: "Calendly-Webhook-Signature",
		Description: "Calendly's t=<unix seconds>,v1=<hex HMAC-SHA256 of t.body> under the workspace's Calendly signing key, within 5 minutes of now."}
	envelope := reg.Schema(reflect.TypeFor[ErrorBody](), true, "")
	errorResponse := func(doc string) *huma.Response {
		return &huma.Response{Description: doc, Content: map[string]*huma.MediaType{"application/json": {Schema: envelope}}}
	}
	s.api.OpenAPI().AddOperation(&huma.Operation{
		OperationID: "receive-booking-webhook", Method: http.MethodPost, Path: "/inbound/{provider}/{workspace_id}",
		Tags: []string{"Bookings"}, Summary: "Receive a scheduling provider's webhook",
		Description: "Point a Cal.com (`BOOKING_CREATED`) or Calendly (`invitee.created`) webhook here. No API key: the provider's " +
			"signature over the body, checked with the workspace's signing secret for that provider (the setup file's `bookings:`), " +
			"is the credential (the security schemes `calcomSignature` and `calendlySignature`). A booking is queued in the request and recorded by a worker, " +
			"once per provider booking id; one whose invitee email matches a lead emits `meeting.booked`. Invalid input answers 4xx, never 5xx, so that a " +
			"provider does not retry it forever.",
		Security: []map[string][]string{{"calcomSignature": {}}, {"calendlySignature": {}}},
		Parameters: []*huma.Param{
			{Name: "provider", In: "path", Required: true, Schema: &huma.Schema{Type: huma.TypeString, Enum: []any{"calcom", "calendly"}}},
			{Name: "workspace_id", In: "path", Required: true, Schema: &huma.Schema{Type: huma.TypeString, Format: "uuid"}},
			{Name: "X-Cal-Signature-256", In: "header", Description: "Cal.com's HMAC-SHA256 of the body.", Schema: &huma.Schema{Type: huma.TypeString}},
			{Name: "Calendly-Webhook-Signature", In: "header", Description: "Calendly's `t=…,v1=…` signature.", Schema: &huma.Schema{Type: huma.TypeString}},
		},
		RequestBody: &huma.RequestBody{Required: true, Description: "The provider's webhook body as it sent it, up to 1 MiB.",
			Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: huma.TypeObject}}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "Received.", Content: map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeFor[bookingReceived](), true, "")}}},
			"401": errorResponse("E_UNAUTHORIZED: the signature does not match the workspace's secret (for Calendly, also a timestamp too far from now)."),
			"402": errorResponse("E_PLAN_SUSPENDED: the workspace is suspended; nothing is recorded."),
			"404": errorResponse("E_NOT_FOUND: an unknown provider, or a workspace with no signing secret for it."),
			"422": errorResponse("E_PAYLOAD_INVALID: a body over 1 MiB, one the provider's format does not read, or values no booking holds (control characters, ids over 512 bytes, a start more than two years from now)."),
			"500": errorResponse("E_INTERNAL: the booking could not be recorded; the provider retries."),
		},
	})
}

// exampleTime is the instant examples in the document use.
const exampleTime = "2026-11-02T09:15:00Z"

// documentExamples gives every request body and every success answer of
// the document an example, made from its schema where the operation gave
// none, so that readers and mock servers see a whole, valid value.
func (s *Server) documentExamples() {
	oa := s.api.OpenAPI()
	for _, item := range oa.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			var media []*huma.MediaType
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Content {
					media = append(media, mt)
				}
			}
			for code, r := range op.Responses {
				if strings.HasPrefix(code, "2") {
					for _, mt := range r.Content {
						media = append(media, mt)
					}
				}
			}
			for _, mt := range media {
				if mt.Example != nil || len(mt.Examples) > 0 || mt.Schema == nil {
					continue
				}
				if ex, ok := s.exampleOf(mt.Schema, 0); ok {
					mt.Example = ex
				}
			}
		}
	}
}

// exampleOf makes a value that sc accepts: its own example or default
// where it has one, otherwise a typical value of its type and format.
// Optional properties are left out unless they have an example; ok is
// false when no value can be made (a pattern other than the id's).
func (s *Server) exampleOf(sc *huma.Schema, depth int) (any, bool) {
	if sc == nil || depth > 12 {
		return nil, false
	}
	if sc.Ref != "" {
		return s.exampleOf(s.api.OpenAPI().Components.Schemas.SchemaFromRef(sc.Ref), depth+1)
	}
	if len(sc.Examples) > 0 {
		return sc.Examples[0], true
	}
	if sc.Default != nil {
		return sc.Default, true
	}
	if len(sc.Enum) > 0 {
		return sc.Enum[0], true
	}
	if len(sc.AnyOf) > 0 {
		return s.exampleOf(sc.AnyOf[0], depth+1)
	}
	if len(sc.OneOf) > 0 {
		return s.exampleOf(sc.OneOf[0], depth+1)
	}
	switch sc.Type {
	case huma.TypeObject:
		out := map[string]any{}
		for name, p := range sc.Properties {
			required := slices.Contains(sc.Required, name)
			if !required && len(p.Examples) == 0 {
				continue
			}
			v, ok := s.exampleOf(p, depth+1)
			if !ok {
				if required {
					return nil, false
				}
				continue
			}
			out[name] = v
		}
		if sc.MinProperties != nil && len(out) < *sc.MinProperties {
			for name, p := range sc.Properties {
				if _, have := out[name]; !have && len(out) < *sc.MinProperties {
					if v, ok := s.exampleOf(p, depth+1); ok {
						out[name] = v
					}
				}
			}
		}
		return out, true
	case huma.TypeArray:
		n := 1
		if sc.MinItems != nil && *sc.MinItems > 1 {
			return nil, false
		}
		v, ok := s.exampleOf(sc.Items, depth+1)
		if !ok {
			return []any{}, sc.MinItems == nil || *sc.MinItems == 0
		}
		out := make([]any, 0, n)
		return append(out, v), true
	case huma.TypeString:
		switch {
		case sc.Format == "uuid":
			return "0198f1a2-7b3c-7d4e-8f50-6a7b8c9d0e1f", true
		case sc.Pattern != "":
			return nil, false
		case sc.Format == "date-time":
			return exampleTime, true
		case sc.Format == "date":
			return exampleTime[:10], true
		case sc.Format == "email":
			return "ann.lee@example.com", true
		case sc.Format == "uri" || sc.Format == "url":
			return "https://example.com/hooks/leadline", true
		}
		ex := "text"
		if sc.MinLength != nil && *sc.MinLength > len(ex) {
			ex = strings.Repeat("x", *sc.MinLength)
		}
		if sc.MaxLength != nil && *sc.MaxLength < len(ex) {
			ex = ex[:*sc.MaxLength]
		}
		return ex, true
	case huma.TypeInteger, huma.TypeNumber:
		v := 1.0
		if sc.Minimum != nil && *sc.Minimum > v {
			v = *sc.Minimum
		}
		if sc.Maximum != nil && *sc.Maximum < v {
			v = *sc.Maximum
		}
		if sc.Type == huma.TypeInteger {
			return int64(v), true
		}
		return v, true
	case huma.TypeBoolean:
		return true, true
	case "":
		return map[string]any{}, true
	}
	return nil, false
}

// requireOneOf says of the request body of the operation at method and
// path that it must hold at least one of fields, its only properties:
// minProperties 1, a keyword every generator and validator reads, with the
// alternatives named in its description.
func (s *Server) requireOneOf(method, path string, fields ...string) {
	op := s.operation(method, path)
	for _, mt := range op.RequestBody.Content {
		sc := mt.Schema
		if sc.Ref != "" {
			sc = s.api.OpenAPI().Components.Schemas.SchemaFromRef(sc.Ref)
		}
		sc.MinProperties = ptrInt(1)
		sc.Description = strings.TrimSpace(sc.Description + " Send " + strings.Join(fields, " or ") + ", or both.")
		sc.PrecomputeMessages()
	}
}
