package server

import (
	"html/template"
	"mime"
	"net/http"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/leads"
)

// The unsubscribe link of every email (RFC 8058). A mail client's
// one-click POST carries the form body List-Unsubscribe=One-Click and gets
// 200 with no body. A person who opens the link gets a page with a button:
// GET changes nothing, because mail scanners follow links. The token is
// sealed (leads.UnsubscribeToken): a bad one gets a plain 404 page.

var unsubscribeTmpl = template.Must(template.New("unsubscribe").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title></head>
<body><main>
<h1>{{.Title}}</h1>
<p>{{.Text}}</p>
{{if .Button}}<form method="post" action="">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<input type="hidden" name="page" value="1">
<button type="submit">Unsubscribe</button>
</form>{{end}}
</main></body></html>
`))

type unsubscribeView struct {
	Title, Text string
	Button      bool
}

func unsubscribeHTML(w http.ResponseWriter, status int, v unsubscribeView) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = unsubscribeTmpl.Execute(w, v)
}

var unsubscribeNotFound = unsubscribeView{Title: "Link not found",
	Text: "This unsubscribe link is not valid. Reply to the email with \"unsubscribe\" instead."}

// unsubscribePage shows the confirmation page of a valid link.
func (s *Server) unsubscribePage(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := leads.ReadUnsubscribeToken(s.secretKey, r.PathValue("token")); !ok {
		unsubscribeHTML(w, http.StatusNotFound, unsubscribeNotFound)
		return
	}
	unsubscribeHTML(w, http.StatusOK, unsubscribeView{Title: "Unsubscribe",
		Text: "Press the button and you will receive no more emails from this sender.", Button: true})
}

// unsubscribe marks the token's lead do-not-contact in its workspace.
func (s *Server) unsubscribe(w http.ResponseWriter, r *http.Request) {
	ws, lead, ok := leads.ReadUnsubscribeToken(s.secretKey, r.PathValue("token"))
	if !ok {
		unsubscribeHTML(w, http.StatusNotFound, unsubscribeNotFound)
		return
	}
	// RFC 8058: the body is a form, urlencoded or multipart.
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	var err error
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		err = r.ParseMultipartForm(64 << 10)
	} else {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		err = r.ParseForm()
	}
	form := r.PostForm
	if err != nil || form.Get("List-Unsubscribe") != "One-Click" {
		unsubscribeHTML(w, http.StatusBadRequest, unsubscribeView{Title: "Not unsubscribed",
			Text: "The request did not carry List-Unsubscribe=One-Click. Open the link and press the button."})
		return
	}
	// A lead deleted since the email was sent is contacted no more: the
	// answer is the same.
	if err := s.leads.Unsubscribe(r.Context(), ws, lead, leads.UnsubscribedByLink); err != nil && apikit.ErrorCode(err) != apikit.ENotFound {
		s.logger.Error("unsubscribe", "error", err)
		unsubscribeHTML(w, http.StatusInternalServerError, unsubscribeView{Title: "Not unsubscribed",
			Text: "Something went wrong on our side. Try again in a few minutes."})
		return
	}
	if form.Get("page") != "" {
		unsubscribeHTML(w, http.StatusOK, unsubscribeView{Title: "Unsubscribed",
			Text: "You will receive no more emails from this sender."})
		return
	}
	w.WriteHeader(http.StatusOK)
}
