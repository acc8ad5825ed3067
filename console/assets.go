package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
)

// The console's own stylesheet and script, and the vendored libraries
// (htmx and Chart.js, from npm by assets/update.sh, with their licences),
// served from the binary under PREFIX/assets/VERSION/: VERSION is a hash
// of every file, so that the files can be cached for good and a new build
// is fetched anew.
//
//go:embed assets/app.css assets/app.js assets/favicon.svg assets/vendor
var assetFS embed.FS

// assetVersion is the hash of every asset file.
var assetVersion = func() string {
	h := sha256.New()
	err := fs.WalkDir(assetFS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assetFS.ReadFile(p)
		h.Write([]byte(p))
		h.Write(b)
		return err
	})
	if err != nil {
		panic(err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

// assets serves PREFIX/assets/ANY/FILE: the current files whatever
// version a page asks for.
func (c *Console) assets() http.Handler {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	base := c.prefix + "/assets/"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, base)
		version, file, ok := strings.Cut(rest, "/")
		if !ok || file == "" || strings.HasSuffix(file, "/") {
			http.NotFound(w, r)
			return
		}
		if version == assetVersion {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + file
		r2.URL.RawPath = ""
		files.ServeHTTP(w, r2)
	})
}
