package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
)

// commonErrors are the statuses every authenticated operation can answer.
var commonErrors = []int{http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden,
	http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusInternalServerError}

// register adds an operation that needs role and counts against class. The
// handler receives the request's principal; its errors become the envelope.
func register[I, O any](s *Server, op huma.Operation, role apikit.Role, class apikit.RateClass,
	h func(ctx context.Context, p apikit.Principal, in *I) (*O, error)) {
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[metaRole] = role
	op.Metadata[metaClass] = class
	op.Security = []map[string][]string{{"bearer": {}}, {"apiKey": {}}}
	errs := append([]int{}, commonErrors...)
	if class != apikit.ClassRead {
		errs = append(errs, http.StatusConflict)
	}
	op.Errors = append(errs, op.Errors...)
	op.Description = op.Description + "\n\nMinimum role: `" + string(role) + "`. Rate class: `" + string(class) + "`" +
		map[bool]string{true: " (also counts as a write)", false: ""}[class == apikit.ClassSpend] + "."
	huma.Register(s.api, op, func(ctx context.Context, in *I) (*O, error) {
		p, _ := apikit.PrincipalFrom(ctx)
		// Every parameter and body field is one line of text unless its
		// field says otherwise: the areas check their own inputs too (for
		// Go callers), and this also covers the query parameters, which
		// reach them only as filters.
		if err := apikit.CheckText("", in); err != nil {
			return nil, s.toStatusError(err)
		}
		out, err := h(ctx, p, in)
		if errors.Is(err, errStale) {
			return nil, err // the guard runs the call again (see Server.ride)
		}
		if err != nil {
			return nil, s.toStatusError(err)
		}
		return out, nil
	})
	envelopeContent(s.operation(op.Method, op.Path))
	s.documentHeaders(op.Method, op.Path, class)
	s.bodyArraysNotNull(s.operation(op.Method, op.Path))
}
