package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
)

// The templates: layout.html (the frame of every page) and components.html
// (blocks any page may use: the error box, the flash, the CSRF field, the
// pager) make the base; every other file is one page, parsed on its own
// copy of the base, named by its file name without .html. A page file
// defines "main", and may define more blocks that htmx asks for alone
// (Request.RenderBlock).
//
//go:embed templates/*.html
var templateFS embed.FS

type pages struct {
	byName map[string]*template.Template
}

func loadPages(prefix string) *pages {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/components.html"))
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	ps := &pages{byName: map[string]*template.Template{}}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" || name == "components" {
			continue
		}
		t := template.Must(base.Clone())
		ps.byName[name] = template.Must(t.ParseFS(templateFS, f))
	}
	return ps
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// deref is the text of an optional field, "" for nil.
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	// join joins texts with ", ".
	"join": func(xs []string) string { return strings.Join(xs, ", ") },
	// plural is "s" unless n is 1.
	"plural": func(n int) string {
		if n == 1 {
			return ""
		}
		return "s"
	},
	"add": func(a, b int) int { return a + b },
}

// page is what a page template gets as its dot. A handler fills Title,
// Nav (the menu entry to mark, an area key), Data (the page's own data)
// and, to show an error beside a form it renders again, Error; render
// fills the rest.
type page struct {
	Title string
	Nav   string
	Data  any
	// Error is shown in the page's error box, message and remedy.
	Error *apikit.Error
	// Refused is the refusal of the request's input (input.go), shown
	// above the page by the layout.
	Refused *apikit.Error

	P        apikit.Principal
	SignedIn bool
	// CSRF is the token every form carries ({{template "csrf" .}}).
	CSRF   string
	Flash  string
	Menu   []navLink
	prefix string
	tz     *time.Location
}

// Can reports whether the member holds at least role (a role name:
// "member", "manager", …): {{if .Can "member"}} shows write controls.
func (p page) Can(role string) bool { return p.P.Role.AtLeast(apikit.Role(role)) }

// Path is the console path of a path under the prefix: {{.Path "/leads"}}.
func (p page) Path(s string) string { return p.prefix + s }

// Asset is the URL of a file of console/assets: {{.Asset "app.css"}}.
func (p page) Asset(name string) string { return p.prefix + "/assets/" + assetVersion + "/" + name }

// Time shows t in the workspace's timezone.
func (p page) Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	loc := p.tz
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04")
}

// TimePtr shows an optional time, "" for nil.
func (p page) TimePtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return p.Time(*t)
}

// Render answers with the page template name, as status.
func (rq *Request) Render(status int, name string, pg page) error {
	rq.render(status, name, pg)
	return nil
}

// RenderBlock answers with one block of the page template name (an htmx
// fragment), as status.
func (rq *Request) RenderBlock(status int, name, block string, pg page) error {
	rq.renderBlock(status, name, block, rq.fill(pg))
	return nil
}

func (rq *Request) fill(pg page) page {
	pg.P, pg.SignedIn, pg.CSRF, pg.Flash, pg.prefix, pg.Refused = rq.P, rq.P.MemberID != "", rq.csrf, rq.flash, rq.c.prefix, rq.refused
	if pg.SignedIn {
		pg.Menu = menu(rq.P, pg.Nav)
		if loc, err := apikit.LoadTimezone(rq.P.Timezone); err == nil {
			pg.tz = loc
		}
	}
	return pg
}

func (rq *Request) render(status int, name string, pg page) {
	if rq.refused != nil && status < http.StatusMultipleChoices {
		status = StatusOf(rq.refused.Code)
	}
	rq.rendering = true
	rq.renderBlock(status, name, "layout", rq.fill(pg))
}

func (rq *Request) renderBlock(status int, name, block string, data any) {
	t := rq.c.pages.byName[name]
	if t == nil {
		panic("console: no page template " + name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, data); err != nil {
		rq.c.log.Error("console render", "page", name, "block", block, "err", err)
		http.Error(rq.W, "The page could not be shown.", http.StatusInternalServerError)
		return
	}
	rq.W.Header().Set("Content-Type", "text/html; charset=utf-8")
	rq.W.WriteHeader(status)
	_, _ = rq.W.Write(buf.Bytes())
}

// Pager is a list's paging: where the page starts and ends in the total,
// and the links to the pages before and after, which keep the list's
// filters.
type Pager struct {
	From, To, Total int
	Prev, Next      string
}

// newPager pages a list of total items shown limit at a time from offset,
// at path with the filters q (offset is replaced).
func newPager(path string, q url.Values, total, limit, offset, shown int) Pager {
	pg := Pager{From: offset + 1, To: offset + shown, Total: total}
	if shown == 0 {
		pg.From = 0
	}
	link := func(off int) string {
		v := url.Values{}
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "offset" {
				continue
			}
			for _, x := range q[k] {
				if x != "" {
					v.Add(k, x)
				}
			}
		}
		if off > 0 {
			v.Set("offset", fmt.Sprint(off))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if offset > 0 {
		pg.Prev = link(max(0, offset-limit))
	}
	if offset+shown < total {
		pg.Next = link(offset + limit)
	}
	return pg
}
