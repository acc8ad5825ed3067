package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// The contract: every answer the server's tests receive through env.call
// is checked against the server's own /v1/openapi.json, so that the
// document says what the server sends and generated clients can trust it.

var contract struct {
	once  sync.Once
	v     validator.Validator
	model *v3.Document
	err   error
}

// guardedHeaders are the response headers whose presence the document
// must declare on each answer that carries them.
var guardedHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"Retry-After", "Idempotent-Replayed", "X-Request-Id"}

// contractValidator builds, once per test binary, the validator of the
// document the handler serves.
func contractValidator(h http.Handler) (validator.Validator, error) {
	contract.once.Do(func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/openapi.json", nil))
		if rec.Code != 200 {
			contract.err = fmt.Errorf("GET /v1/openapi.json: %d", rec.Code)
			return
		}
		doc, err := libopenapi.NewDocument(rec.Body.Bytes())
		if err != nil {
			contract.err = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			contract.err = fmt.Errorf("validator: %v", errs)
			return
		}
		if ok, verrs := v.ValidateDocument(); !ok {
			contract.err = fmt.Errorf("the document is not valid OpenAPI: %v", describe(verrs))
			return
		}
		m, err := doc.BuildV3Model()
		if err != nil {
			contract.err = err
			return
		}
		contract.v, contract.model = v, &m.Model
	})
	return contract.v, contract.err
}

// checkContract reports where the answer rec to req departs from the
// document. Requests to routes the document does not have (health, the
// unsubscribe pages, unknown paths and methods) are not checked.
func checkContract(t testing.TB, h http.Handler, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	v, err := contractValidator(h)
	if err != nil {
		t.Fatalf("contract: %v", err)
	}
	// A path the mux does not route (empty segments, . or .., a trailing
	// slash) is answered 404 by the envelope fallback, outside any
	// operation, whatever route it resembles.
	if p := req.URL.Path; cleanPath(p) != p || (len(p) > 1 && strings.HasSuffix(p, "/")) {
		return
	}
	res := rec.Result()
	ok, verrs := v.ValidateHttpResponse(req, res)
	var kept []*verrors.ValidationError
	if ok {
		kept = undeclaredHeaders(req, res)
	}
	for _, e := range verrs {
		if e.IsPathMissingError() || e.IsOperationMissingError() {
			return
		}
		kept = append(kept, e)
	}
	if len(kept) > 0 {
		body := rec.Body.String()
		if len(body) > 400 {
			body = body[:400] + "…"
		}
		t.Errorf("contract: %s %s answered %d outside /v1/openapi.json: %s\nbody: %s", req.Method, req.URL.Path, rec.Code, describe(kept), body)
	}
}

func describe(errs []*verrors.ValidationError) string {
	var out []string
	for _, e := range errs {
		s := e.Message
		if e.Reason != "" {
			s += " (" + e.Reason + ")"
		}
		for _, f := range e.SchemaValidationErrors {
			s += "; " + f.FieldPath + ": " + f.Reason
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), " | ")
}

// undeclaredHeaders lists the guarded headers res carries that the
// document does not declare on its answer.
func undeclaredHeaders(req *http.Request, res *http.Response) []*verrors.ValidationError {
	item, errs, _ := paths.FindPath(req, contract.model, config.NewValidationOptions())
	if item == nil || len(errs) > 0 {
		return nil
	}
	op := item.GetOperations().GetOrZero(strings.ToLower(req.Method))
	if op == nil || op.Responses == nil {
		return nil
	}
	r := op.Responses.Codes.GetOrZero(strconv.Itoa(res.StatusCode))
	if r == nil {
		return nil
	}
	var out []*verrors.ValidationError
	for _, h := range guardedHeaders {
		if res.Header.Get(h) != "" && (r.Headers == nil || r.Headers.GetOrZero(h) == nil) {
			out = append(out, &verrors.ValidationError{Message: "header " + h + " is sent but not documented"})
		}
	}
	return out
}
