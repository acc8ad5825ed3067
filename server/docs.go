package server

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// The reference page's script and styles are Stoplight Elements from the
// npm registry, vendored under assets/vendor (with its licence) by
// scripts/update-docs-assets.sh, and served from the binary: /v1/docs
// works with no internet, and its Content-Security-Policy lets it load
// nothing from anywhere else.
//
//go:embed assets/vendor/stoplight-elements
var docsAssets embed.FS

// elementsVersion is the vendored Stoplight Elements' version.
var elementsVersion = func() string {
	b, err := docsAssets.ReadFile("assets/vendor/stoplight-elements/VERSION")
	if err != nil {
		panic("server: the vendored docs assets have no VERSION: " + err.Error())
	}
	return strings.TrimSpace(string(b))
}()

// docsCSP is the docs page's Content-Security-Policy: everything from this
// server. Elements sets styles inline, and shows images as data: URLs.
const docsCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// registerDocs serves the API reference at /v1/docs and its assets under
// /v1/docs/assets/elements-VERSION/ (cached for a year: the version is in
// the path).
func (s *Server) registerDocs(openAPIPath string) {
	prefix := "/v1/docs/assets/elements-" + elementsVersion + "/"
	sub, err := fs.Sub(docsAssets, "assets/vendor/stoplight-elements")
	if err != nil {
		panic(err)
	}
	files := http.StripPrefix(prefix, http.FileServerFS(sub))
	s.mux.Handle("GET "+prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	}))
	page := []byte(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="referrer" content="no-referrer">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>leadline API Reference</title>
    <link rel="stylesheet" href="` + prefix + `styles.min.css">
    <script src="` + prefix + `web-components.min.js"></script>
  </head>
  <body style="height: 100vh;">
    <elements-api
      apiDescriptionUrl="` + openAPIPath + `.json"
      router="hash"
      layout="sidebar"
      tryItCredentialsPolicy="same-origin"
    ></elements-api>
  </body>
</html>
`)
	s.mux.HandleFunc("GET /v1/docs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", docsCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(page)
	})
}
