package console

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/workspace"
)

// The blacklist, in the settings: the workspace's entries (companies,
// email domains, LinkedIn identifiers) with search and paging, an add
// form and a remove button per entry, for owners and managers of the
// whole workspace, through the workspace service as `leadline blacklist
// list|add|remove` (there is no /v1 route: docs/DECISIONS.md).
func (c *Console) routesBlacklist() {
	c.handle("GET /settings/blacklist", apikit.RoleManager, c.blacklistPage)
	c.handle("POST /settings/blacklist", apikit.RoleManager, c.addBlacklist)
	c.handle("POST /settings/blacklist/{id}/remove", apikit.RoleManager, c.removeBlacklist)
}

type blacklistData struct {
	Kinds   []string
	Filter  struct{ Kind, Q string }
	Entries []workspace.BlacklistEntry
	Pager   Pager
	// Back is the list's query, where a removal returns to.
	Back string
	// Form is what was typed, kept when the values are refused.
	Form struct{ Kind, Values string }
}

func (c *Console) blacklistData(rq *Request, q url.Values) (*blacklistData, error) {
	d := &blacklistData{Kinds: workspace.BlacklistKinds}
	d.Filter.Kind, d.Filter.Q = q.Get("kind"), strings.TrimSpace(q.Get("q"))
	if !slices.Contains(d.Kinds, d.Filter.Kind) {
		d.Filter.Kind = ""
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	list, err := c.pl.Workspaces.ListBlacklist(rq.Ctx, rq.P, workspace.BlacklistFilter{Kind: d.Filter.Kind, Q: d.Filter.Q, Offset: offset})
	if err != nil {
		return nil, err
	}
	d.Entries = list.Data
	d.Pager = newPager(rq.Path("/settings/blacklist"), q, list.Total, list.Limit, offset, len(list.Data))
	d.Back = q.Encode()
	d.Form.Kind = workspace.BlacklistCompany
	return d, nil
}

func (c *Console) blacklistPage(rq *Request) error {
	d, err := c.blacklistData(rq, rq.R.URL.Query())
	if err != nil {
		return err
	}
	return rq.renderSettings(http.StatusOK, "blacklist", page{Data: d})
}

// valueLines are the non-empty lines of s: one value a line (a company's
// name may hold a comma).
func valueLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// addBlacklist adds the typed values as `leadline blacklist add` does.
func (c *Console) addBlacklist(rq *Request) error {
	f := rq.R.PostForm
	kind, typed := f.Get("kind"), f.Get("values")
	res, err := c.pl.Workspaces.AddBlacklist(rq.Ctx, rq.P, kind, valueLines(typed))
	if err != nil {
		ae := apikit.AsError(err)
		if ae.Code == apikit.EInternal || ae.Code == apikit.EForbidden {
			return err
		}
		d, derr := c.blacklistData(rq, url.Values{})
		if derr != nil {
			return derr
		}
		d.Form.Kind, d.Form.Values = kind, typed
		return rq.renderSettings(StatusOf(ae.Code), "blacklist", page{Data: d, Error: ae})
	}
	msg := fmt.Sprintf("%d added to the blacklist", len(res.Added))
	if n := len(res.AlreadyListed); n > 0 {
		msg += fmt.Sprintf("; %d already listed, unchanged: %s", n, sample(res.AlreadyListed))
	}
	rq.Flash(msg + ".")
	rq.Redirect("/settings/blacklist?kind=" + url.QueryEscape(kind))
	return nil
}

// removeBlacklist removes one entry as `leadline blacklist remove ID`
// does, and goes back to the list it was clicked in.
func (c *Console) removeBlacklist(rq *Request) error {
	gone, err := c.pl.Workspaces.RemoveBlacklist(rq.Ctx, rq.P, workspace.BlacklistRemoval{IDs: []string{rq.R.PathValue("id")}})
	if err != nil {
		return err
	}
	rq.Flash(fmt.Sprintf("Removed %s %s from the blacklist. What it stopped stays stopped.", gone[0].Kind, sample([]string{gone[0].Value})))
	back, _ := url.ParseQuery(rq.R.PostFormValue("back"))
	to := "/settings/blacklist"
	if enc := back.Encode(); enc != "" {
		to += "?" + enc
	}
	rq.Redirect(to)
	return nil
}

// sample is the first few of values, each cut short, for a flash (a
// cookie: it must stay small).
func sample(values []string) string {
	const most, width = 5, 60
	var out []string
	for _, v := range values[:min(most, len(values))] {
		if r := []rune(v); len(r) > width {
			v = string(r[:width]) + "…"
		}
		out = append(out, v)
	}
	s := strings.Join(out, ", ")
	if len(values) > most {
		s += fmt.Sprintf(" and %d more", len(values)-most)
	}
	return s
}
