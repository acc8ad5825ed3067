package server

import (
	"maps"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
)

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

func intHeader(doc string) *huma.Param {
	return &huma.Param{Description: doc, Schema: &huma.Schema{Type: huma.TypeInteger}}
}

// rateLimitHeaders are on every answer that counted against a budget.
var rateLimitHeaders = map[string]*huma.Param{
	"X-RateLimit-Limit":     intHeader("Calls per hour this key may make in the call's rate class."),
	"X-RateLimit-Remaining": intHeader("Calls left in the current window of that class."),
	"X-RateLimit-Reset":     intHeader("Unix seconds at which the window resets."),
}

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
// registered operation: Idempotency-Key on writes, the rate-limit headers
// on its answers, Retry-After on 429 and Idempotent-Replayed on the
// success answers of writes.
func (s *Server) documentHeaders(method, path string, class apikit.RateClass) {
	op := s.operation(method, path)
	if class != apikit.ClassRead {
		op.Parameters = append(op.Parameters, idempotencyKeyParam())
	}
	for code, r := range op.Responses {
		headers := maps.Clone(r.Headers)
		if headers == nil {
			headers = map[string]*huma.Param{}
		}
		switch {
		case strings.HasPrefix(code, "2"):
			maps.Copy(headers, rateLimitHeaders)
			if class != apikit.ClassRead {
				headers["Idempotent-Replayed"] = &huma.Param{
					Description: "`true` when this is the stored answer to an earlier call with the same Idempotency-Key.",
					Schema:      &huma.Schema{Type: huma.TypeString, Enum: []any{"true"}},
				}
			}
		case code == "429":
			maps.Copy(headers, rateLimitHeaders)
			headers["Retry-After"] = intHeader("Seconds until the hourly window resets.")
		default:
			continue
		}
		copied := *r
		copied.Headers = headers
		op.Responses[code] = &copied
	}
}
