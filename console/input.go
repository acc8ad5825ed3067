package console

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/leadline/leadline/apikit"
)

// The console reads what the API reads, and holds it to the API's input
// rules before any page sees it (checkInput, called for every page by
// serve): no value may hold a NUL or invalid UTF-8, which neither
// database stores; the address, every query parameter and every name
// (of a parameter, a form field or an uploaded file) is one line
// (apikit.OneLine: no control character); and no value is longer than
// the longest the API takes. A form field's own rules — one line or
// several, its length, its format — are the service's, checked by
// apikit.CheckText on the service's input, as for /v1.
//
// A refused query parameter is left out and the page is shown as it is
// without it, with the refusal above it (status 422). A refused form is
// not handed to its page: the page the form is on (the write's path, or
// the nearest path above it that a GET page answers) is shown with the
// refusal, as 422. A refused address is an error page.
const (
	// maxQueryValue bounds a query parameter's value and the address:
	// the API's longest one-line field (a webhook's URL).
	maxQueryValue = 2000
	// maxName bounds a parameter's, a field's or a file's name.
	maxName = 200
	// maxFormLine bounds each line of a form value: the API's longest
	// text (a reply's body). A value of many lines (a list of emails) is
	// bounded by the form's size (maxForm).
	maxFormLine = 20000
)

// checkInput holds the request's address, query and (for a write) form to
// the input rules above. A refused query parameter is dropped and
// recorded; a refused form is answered here with the page it came from
// (answered), or returned when no page shows it. A refused address is
// returned.
func (rq *Request) checkInput(write bool) (answered bool, err error) {
	r := rq.R
	if refused, ok := r.Context().Value(refusalKey{}).(*apikit.Error); ok {
		rq.refuse(refused) // a refused form's page, shown by showRefused
	}
	if err := checkValue("the address", r.URL.Path, maxQueryValue); err != nil {
		return false, err
	}
	q := r.URL.Query()
	dropped := false
	for name, vs := range q {
		err := checkName("a parameter's name", name)
		for _, v := range vs {
			if err == nil {
				err = checkValue(name, v, maxQueryValue)
			}
		}
		if err == nil {
			continue
		}
		if write {
			return rq.showRefused(err)
		}
		rq.refuse(leftOut(err))
		delete(q, name)
		dropped = true
	}
	if dropped {
		r.URL.RawQuery = q.Encode()
		r.Form = nil
	}
	if !write {
		if rq.refused != nil {
			rq.W = &refusalGuard{ResponseWriter: rq.W, rq: rq}
		}
		return false, nil
	}
	if err := checkForm(r); err != nil {
		return rq.showRefused(err)
	}
	return false, nil
}

// checkForm checks a posted form's names and values, and its files'
// names.
func checkForm(r *http.Request) error {
	forms := []url.Values{r.PostForm}
	if r.MultipartForm != nil {
		forms = append(forms, r.MultipartForm.Value)
		for name, fs := range r.MultipartForm.File {
			if err := checkName("a form field's name", name); err != nil {
				return err
			}
			for _, f := range fs {
				if err := checkName("the file's name", f.Filename); err != nil {
					return err
				}
			}
		}
	}
	for _, f := range forms {
		for _, name := range slices.Sorted(maps.Keys(f)) {
			if err := checkName("a form field's name", name); err != nil {
				return err
			}
			for _, v := range f[name] {
				if err := storable(name, v); err != nil {
					return err
				}
				for line := range strings.Lines(v) {
					if n := utf8.RuneCountInString(line); n > maxFormLine {
						return tooLong(name, maxFormLine, " a line")
					}
				}
			}
		}
	}
	return nil
}

// checkName checks a name: one line, at most maxName characters.
func checkName(field, name string) error {
	return checkValue(field, name, maxName)
}

// checkValue checks a one-line value of at most limit characters.
func checkValue(field, v string, limit int) error {
	if err := storable(field, v); err != nil {
		return err
	}
	if err := apikit.OneLine(field, v); err != nil {
		return err
	}
	if utf8.RuneCountInString(v) > limit {
		return tooLong(field, limit, "")
	}
	return nil
}

// storable refuses a NUL or invalid UTF-8 in v as CheckText refuses it
// in a free-form value, naming field.
func storable(field, v string) error {
	if apikit.Storable(v) {
		return nil
	}
	return apikit.CheckText(field, map[string]any{"": v})
}

func tooLong(field string, limit int, what string) *apikit.Error {
	return apikit.Invalid(fmt.Sprintf("%s holds%s longer than %d characters.", field, cmp.Or(what, " text"), limit),
		fmt.Sprintf("Shorten %s to at most %d characters.", field, limit))
}

// leftOut is the refusal of a query parameter the page was shown without.
func leftOut(err error) *apikit.Error {
	ae := *apikit.AsError(err)
	ae.Message = strings.TrimSuffix(ae.Message, ".") + "; the page is shown without it."
	return &ae
}

// refuse records the request's first refusal.
func (rq *Request) refuse(err error) {
	if rq.refused == nil {
		rq.refused = apikit.AsError(err)
	}
}

type refusalKey struct{}

// showRefused answers a refused write with the page its form is on: the
// GET page of the write's path or of the nearest path above it, shown
// with the refusal (answered). Without such a page, err is returned, for
// Fail to show.
func (rq *Request) showRefused(err error) (answered bool, _ error) {
	c := rq.c
	for p := rq.R.URL.Path; strings.HasPrefix(p, c.prefix+"/") && p != c.prefix+"/"; p = path.Dir(p) {
		get, _ := http.NewRequestWithContext(context.WithValue(rq.R.Context(), refusalKey{}, apikit.AsError(err)), http.MethodGet, p, nil)
		get.Header, get.RemoteAddr, get.Host = rq.R.Header.Clone(), rq.R.RemoteAddr, rq.R.Host
		get.Header.Del("HX-Request") // the whole page, not a fragment
		if _, pattern := c.mux.Handler(get); !strings.HasPrefix(pattern, http.MethodGet+" ") || pattern == http.MethodGet+" "+c.prefix+"/{$}" {
			continue
		}
		c.mux.ServeHTTP(rq.W, get)
		return true, nil
	}
	return false, err
}

// refusalGuard stands between a page that was refused a query parameter
// and its answer: a page (render) shows the refusal; any other answer
// (a download, a fragment), which could not show it, becomes the refusal,
// so that nothing is answered as if the parameter had been applied.
// Redirects pass.
type refusalGuard struct {
	http.ResponseWriter
	rq      *Request
	blocked bool
	wrote   bool
}

func (g *refusalGuard) WriteHeader(code int) {
	if g.wrote {
		return
	}
	g.wrote = true
	rq := g.rq
	if rq.rendering || code >= 300 && code < 400 {
		g.ResponseWriter.WriteHeader(code)
		return
	}
	g.blocked = true
	h := g.ResponseWriter.Header()
	h.Del("Content-Disposition")
	h.Del("Content-Type")
	refused := rq.refused
	rq.refused, rq.W = nil, g.ResponseWriter
	rq.Fail(refused)
}

func (g *refusalGuard) Write(b []byte) (int, error) {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	if g.blocked {
		return len(b), nil
	}
	return g.ResponseWriter.Write(b)
}

func (g *refusalGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }
