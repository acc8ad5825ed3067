package server

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
)

// ErrorBody is the envelope of every non-2xx answer:
// {"error":{"code","message","remedy","request_id"}}.
type ErrorBody struct {
	Err    ErrorDetail `json:"error"`
	status int
}

// ErrorDetail is the inside of the error envelope.
type ErrorDetail struct {
	Code    string `json:"code" enum:"E_UNAUTHORIZED,E_PLAN_SUSPENDED,E_FORBIDDEN,E_NOT_FOUND,E_IDEMPOTENCY_MISMATCH,E_IN_PROGRESS,E_CONFLICT,E_PAYLOAD_INVALID,E_TOO_MANY,E_GRAPH_INVALID,E_RATE_LIMITED,E_INTERNAL" doc:"Stable error code."`
	Message string `json:"message" doc:"What went wrong."`
	Remedy  string `json:"remedy" doc:"What to do about it."`
	// RequestID is the answer's X-Request-Id, for support and the logs.
	RequestID string `json:"request_id" doc:"The answer's X-Request-Id: quote it when you report a problem; the server's request log has the same id."`
}

// withRequestID is b with the request id of the call that answers it.
func withRequestID(b *ErrorBody, id string) *ErrorBody {
	c := *b
	c.Err.RequestID = id
	return &c
}

// stampRequestID is a huma transformer: an error envelope that huma
// writes (a handler's error, a refused parameter or body) carries the
// call's request id.
func stampRequestID(ctx huma.Context, _ string, v any) (any, error) {
	if b, ok := v.(*ErrorBody); ok {
		return withRequestID(b, requestIDOf(ctx.Context())), nil
	}
	return v, nil
}

// GetStatus is the HTTP status of the error.
func (e *ErrorBody) GetStatus() int { return e.status }

func (e *ErrorBody) Error() string { return e.Err.Code + ": " + e.Err.Message }

// statusOf maps each code to its HTTP status: the one place where codes
// become statuses.
var statusOf = map[string]int{
	apikit.EUnauthorized:        http.StatusUnauthorized,
	apikit.EPlanSuspended:       http.StatusPaymentRequired,
	apikit.EForbidden:           http.StatusForbidden,
	apikit.ENotFound:            http.StatusNotFound,
	apikit.EIdempotencyMismatch: http.StatusConflict,
	apikit.EInProgress:          http.StatusConflict,
	apikit.EConflict:            http.StatusConflict,
	apikit.EPayloadInvalid:      http.StatusUnprocessableEntity,
	apikit.ETooMany:             http.StatusUnprocessableEntity,
	apikit.EGraphInvalid:        http.StatusUnprocessableEntity,
	apikit.ERateLimited:         http.StatusTooManyRequests,
	apikit.EInternal:            http.StatusInternalServerError,
}

// StatusOf is the HTTP status of an error code (500 for an unknown one),
// for the console's pages, which answer errors as the API does.
func StatusOf(code string) int {
	if st, ok := statusOf[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// fromAPI turns an apikit error into the envelope with its status.
func fromAPI(e *apikit.Error) *ErrorBody {
	return &ErrorBody{Err: ErrorDetail{Code: e.Code, Message: e.Message, Remedy: e.Remedy}, status: StatusOf(e.Code)}
}

// newHumaError renders huma's own errors (validation, malformed bodies,
// unsupported content types) in leadline's envelope.
func newHumaError(status int, msg string, errs ...error) huma.StatusError {
	var details []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		if body, ok := envelopeOf(err); ok {
			return body
		}
		var d *huma.ErrorDetail
		if errors.As(err, &d) {
			loc := strings.TrimPrefix(d.Location, "body.")
			if strings.HasPrefix(d.Message, "unexpected property") {
				details = append(details, fmt.Sprintf("unknown field %q", loc))
				continue
			}
			if strings.HasPrefix(d.Message, "expected array length <=") {
				// The spec's caps on lists (maxItems in the document)
				// answer E_TOO_MANY, as the services' own checks do.
				return fromAPI(apikit.TooMany(fmt.Sprintf("%s holds more items than one call takes (%s).", loc, d.Message),
					"Split the list over several calls."))
			}
			msg := d.Message
			if msg == "expected string to match pattern "+apikit.IDPattern {
				msg = "expected an id: a lower-case uuid"
			}
			details = append(details, fmt.Sprintf("%s: %s", loc, msg))
			continue
		}
		if status < 500 {
			details = append(details, err.Error())
		}
	}
	switch {
	case status >= 500:
		return fromAPI(apikit.Internal())
	case status == http.StatusUnauthorized:
		return fromAPI(apikit.Unauthorized(msg))
	case status == http.StatusForbidden:
		return fromAPI(apikit.Forbidden(msg, "Use a key whose role and client scope allow this call."))
	case status == http.StatusNotFound:
		return fromAPI(apikit.NotFound("The resource"))
	}
	text := msg
	if len(details) > 0 {
		text = "The request is invalid: " + strings.Join(details, "; ") + "."
	} else if text != "" {
		text = strings.ToUpper(text[:1]) + text[1:] + "."
	}
	// Every other client error is invalid input: the spec answers it with
	// 422, whatever status huma chose (400 for malformed JSON, 413, 415).
	remedy := "Fix the request as the message says; /v1/docs shows each operation's parameters and body."
	if status == http.StatusRequestEntityTooLarge {
		remedy = "Send a smaller body: split the request into several calls."
	}
	if status == http.StatusUnsupportedMediaType || status == http.StatusNotAcceptable {
		remedy = "Send and accept application/json."
	}
	b := fromAPI(apikit.Invalid(text, remedy))
	return b
}

// chainErrors routes huma's own errors (validation, malformed bodies)
// through newHumaError for leadline's operations only. huma builds them
// with the process-wide huma.NewErrorWithContext: leadline wraps the hook
// it finds, once, and hands every operation that is not leadline's to it,
// so that a program serving its own huma API beside leadline's keeps its
// own error format (and its own hooks, set before or after).
var chainErrors = sync.OnceFunc(func() {
	prev := huma.NewErrorWithContext
	huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		if ctx != nil && isLeadlineOp(ctx.Operation()) {
			return newHumaError(status, msg, errs...)
		}
		if prev != nil {
			return prev(ctx, status, msg, errs...)
		}
		return huma.NewError(status, msg, errs...)
	}
})

// isLeadlineOp reports whether op was registered by a leadline Server.
func isLeadlineOp(op *huma.Operation) bool {
	if op == nil {
		return false
	}
	_, ok := op.Metadata[metaRole]
	return ok
}

// documentErrorsAsEnvelope makes the API's registry describe huma's error
// type as leadline's envelope: huma documents every operation's errors
// with the type huma.NewError returns, which stays huma's own.
func documentErrorsAsEnvelope(api huma.API) {
	api.OpenAPI().Components.Schemas.RegisterTypeAlias(reflect.TypeFor[huma.ErrorModel](), reflect.TypeFor[ErrorBody]())
}

// envelopeContent moves the error answers of op to application/json: huma
// documents its error type as application/problem+json.
func envelopeContent(op *huma.Operation) {
	for code, r := range op.Responses {
		if strings.HasPrefix(code, "2") || r == nil {
			continue
		}
		if mt, ok := r.Content["application/problem+json"]; ok {
			delete(r.Content, "application/problem+json")
			r.Content["application/json"] = mt
		}
	}
}

// toStatusError is what every handler returns on failure: apikit errors
// keep their code, anything else is logged and shown as E_INTERNAL.
func (s *Server) toStatusError(err error) error {
	if body, ok := envelopeOf(err); ok {
		return body
	}
	s.logger.Error("internal error", "err", err)
	return fromAPI(apikit.Internal())
}

// envelopeOf returns the envelope for an error leadline made itself: an
// *ErrorBody as it is, an *apikit.Error with its status.
func envelopeOf(err error) (*ErrorBody, bool) {
	var body *ErrorBody
	if errors.As(err, &body) {
		return body, true
	}
	var ae *apikit.Error
	if errors.As(err, &ae) {
		return fromAPI(ae), true
	}
	return nil, false
}
