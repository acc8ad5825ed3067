package server

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
)

func TestUnsubscribeLink(t *testing.T) {
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		w, _ := e.ws.ByName(ctx, "acme")
		ann := e.lead("member", map[string]any{"name": "Ann Lee", "email_work": "ann@example.test"})["id"].(string)
		token, err := leads.UnsubscribeToken(secret.TestKey(), w.ID, ann)
		is.NoErr(err)
		is.True(!strings.Contains(token, ann)) // no id in the clear
		is.True(!strings.Contains(token, w.ID))
		send := func(method, token, body string) (int, string) {
			req := httptest.NewRequest(method, "/unsubscribe/"+token, strings.NewReader(body))
			if body != "" {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			return rec.Code, rec.Body.String()
		}
		dnc := func() bool {
			return e.call("GET", "/v1/leads/"+ann, "member", nil).data()["do_not_contact"].(bool)
		}

		// A mail scanner follows the link: a page with a button, nothing changed.
		code, page := send("GET", token, "")
		is.Equal(code, 200)
		is.True(strings.Contains(page, `<button type="submit">Unsubscribe</button>`))
		is.True(!dnc())

		// Bad tokens: altered, made under another key, garbage: a plain 404 page.
		other, _, err := secret.Generate()
		is.NoErr(err)
		forged, err := leads.UnsubscribeToken(other, w.ID, ann)
		is.NoErr(err)
		altered := token[:len(token)-2] + "AA"
		for _, bad := range []string{forged, altered, "nope"} {
			code, page = send("POST", bad, "List-Unsubscribe=One-Click")
			is.Equal(code, 404)
			is.True(strings.Contains(page, "not valid"))
			code, _ = send("GET", bad, "")
			is.Equal(code, 404)
		}
		// A POST without the one-click body changes nothing.
		code, _ = send("POST", token, "")
		is.Equal(code, 400)
		is.True(!dnc())

		// The mail client's one-click POST: 200, no body; the lead is
		// do-not-contact, and the timeline says how.
		code, page = send("POST", token, "List-Unsubscribe=One-Click")
		is.Equal(code, 200)
		is.Equal(page, "")
		is.True(dnc())
		tl := e.call("GET", "/v1/leads/"+ann+"/timeline", "member", nil)
		is.Equal(tl.Status, 200)
		is.True(strings.Contains(string(tl.Raw), `"lead.suppressed"`))
		is.True(strings.Contains(string(tl.Raw), leads.UnsubscribedByLink))
		// Again, and from the page's button: the same answer, nothing new.
		code, _ = send("POST", token, "List-Unsubscribe=One-Click")
		is.Equal(code, 200)
		code, page = send("POST", token, "List-Unsubscribe=One-Click&page=1")
		is.Equal(code, 200)
		is.True(strings.Contains(page, "Unsubscribed"))

		// RFC 8058 allows a multipart form too.
		bo := e.lead("member", map[string]any{"name": "Bo Chen", "email_work": "bo@example.test"})["id"].(string)
		boToken, err := leads.UnsubscribeToken(secret.TestKey(), w.ID, bo)
		is.NoErr(err)
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		is.NoErr(mw.WriteField("List-Unsubscribe", "One-Click"))
		is.NoErr(mw.Close())
		req := httptest.NewRequest("POST", "/unsubscribe/"+boToken, &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		is.Equal(rec.Code, 200)
		is.True(e.call("GET", "/v1/leads/"+bo, "member", nil).data()["do_not_contact"].(bool))
	})
}
