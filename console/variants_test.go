package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/net/html"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/sequences"
)

// TestSequenceVariantTests: the sequence's page shows each step's A/B
// test (its variants' table and chart, the CSV), a manager picks a
// variant and undoes the pick there, a member may not, and a pick of a
// variant the step does not have changes nothing.
func TestSequenceVariantTests(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.sandboxSenders()
		p := e.owner()
		ctx := context.Background()
		_, err := e.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: p.WorkspaceID}, []sequences.Spec{{Name: "AB", Senders: []string{"mail"},
			Steps: []sequences.Step{{ID: "mail", Type: "email", Variants: []sequences.Variant{
				{ID: "a", Subject: "A", Body: "Hello"}, {ID: "b", Subject: "B", Body: "Hi", Weight: 2}},
				PickWinner: &sequences.PickWinner{Metric: "reply_rate", MinSends: 50, Confidence: 0.95}}}}})
		is.NoErr(err)
		q, err := e.pl.Sequences.ByName(ctx, p.WorkspaceID, "AB")
		is.NoErr(err)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		path := "/app/sequences/" + q.ID

		page := boss.get(path)
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, `id="h-test-mail"`))
		is.True(strings.Contains(page.body, `id="table-variants-mail"`))
		is.True(strings.Contains(page.body, `id="chart-variants-mail"`))
		is.True(strings.Contains(page.body, `id="pick-mail"`))
		is.True(!strings.Contains(page.body, `id="undo-mail"`)) // nothing to undo yet
		member := sdr.get(path)
		is.True(strings.Contains(member.body, `id="table-variants-mail"`))
		is.True(!strings.Contains(member.body, `id="pick-mail"`))
		is.Equal(sdr.post(path, path+"/steps/mail/winner", url.Values{"variant_id": {"a"}}).code, http.StatusForbidden)

		// A variant the step does not have: refused, nothing picked.
		r := boss.post(path, path+"/steps/mail/winner", url.Values{"variant_id": {"zz"}})
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.Equal(boss.post(path, path+"/steps/nope/winner", url.Values{"variant_id": {"a"}}).code, http.StatusNotFound)
		q, _ = e.pl.Sequences.ByName(ctx, p.WorkspaceID, "AB")
		is.True(q.WinnerOf("mail") == nil)

		r = boss.post(path, path+"/steps/mail/winner", url.Values{"variant_id": {"b"}})
		is.Equal(r.code, http.StatusSeeOther)
		page = boss.get(path)
		is.True(strings.Contains(page.body, "b was picked by a manager on"))
		is.True(strings.Contains(page.body, `id="undo-mail"`))
		csv := boss.get(path + "/variants.csv")
		is.Equal(csv.code, http.StatusOK)
		is.True(strings.HasPrefix(csv.header.Get("Content-Type"), "text/csv"))
		lines := strings.Split(strings.TrimSpace(csv.body), "\n")
		is.Equal(len(lines), 3)
		is.True(strings.HasPrefix(lines[0], "Step,Variant,Weight,Sent"))
		is.True(strings.HasPrefix(lines[1], "mail,a,1,0"))
		is.True(strings.HasSuffix(lines[2], ",true")) // b won

		r = boss.post(path, path+"/steps/mail/winner/undo", nil)
		is.Equal(r.code, http.StatusSeeOther)
		page = boss.get(path)
		is.True(strings.Contains(page.body, "The pick of b was undone on"))
		is.True(!strings.Contains(page.body, `id="undo-mail"`))
	})
}

// formValues are the fields of the page's form with id, as a browser
// would post it unchanged: inputs (checked boxes only), text areas and
// each select's chosen option. Buttons are left out.
func formValues(t *testing.T, page, id string) url.Values {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	attr := func(n *html.Node, k string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == k {
				return a.Val, true
			}
		}
		return "", false
	}
	var form *html.Node
	for n := range doc.Descendants() {
		if v, _ := attr(n, "id"); n.Type == html.ElementNode && n.Data == "form" && v == id {
			form = n
		}
	}
	if form == nil {
		t.Fatalf("no form %q in the page", id)
	}
	out := url.Values{}
	for n := range form.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		name, ok := attr(n, "name")
		if !ok {
			continue
		}
		switch n.Data {
		case "input":
			typ, _ := attr(n, "type")
			if _, checked := attr(n, "checked"); (typ == "checkbox" || typ == "radio") && !checked {
				continue
			}
			v, _ := attr(n, "value")
			out.Add(name, v)
		case "textarea":
			v := ""
			if n.FirstChild != nil {
				v = n.FirstChild.Data
			}
			out.Add(name, v)
		case "select":
			var first, chosen *string
			for o := range n.Descendants() {
				if o.Type == html.ElementNode && o.Data == "option" {
					v, _ := attr(o, "value")
					if first == nil {
						first = &v
					}
					if _, sel := attr(o, "selected"); sel {
						chosen = &v
					}
				}
			}
			if chosen == nil {
				chosen = first
			}
			if chosen != nil {
				out.Add(name, *chosen)
			}
		}
	}
	return out
}

// TestBuilderEditsVariants: the builder shows a step's variants and its
// pick_winner, and saving the page as shown keeps them; a step's text
// becomes variant a of a new test beside an empty b, a variant removed
// down to one gives the step its text back, and a confidence that is not
// a number is refused with nothing changed.
func TestBuilderEditsVariants(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.sandboxSenders()
		p := e.owner()
		ctx := context.Background()
		_, err := e.pl.Sequences.Apply(ctx, sequences.Owner{WorkspaceID: p.WorkspaceID}, []sequences.Spec{{Name: "AB", Senders: []string{"mail"},
			Steps: []sequences.Step{
				{ID: "mail", Type: "email", Variants: []sequences.Variant{
					{ID: "a", Subject: "A {{company|you}}", Body: "Hello\nthere"}, {ID: "b", Subject: "B", Body: "Hi", Weight: 2}},
					PickWinner: &sequences.PickWinner{Metric: "reply_rate", MinSends: 50, Confidence: 0.95}},
				{ID: "nudge", Type: "email", Body: "A nudge."}}}})
		is.NoErr(err)
		q, err := e.pl.Sequences.ByName(ctx, p.WorkspaceID, "AB")
		is.NoErr(err)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		path := "/app/sequences/" + q.ID
		stored := func() *sequences.Sequence {
			q, err := e.pl.Sequences.ByName(ctx, p.WorkspaceID, "AB")
			is.NoErr(err)
			return q
		}

		// Saved as shown: the test is kept, texts, weights and pick alike.
		page := boss.get(path)
		is.True(strings.Contains(page.body, `id="s0-variants"`))
		form := formValues(t, page.body, "builder")
		is.Equal(form.Get("s0.variants"), "2")
		is.Equal(form.Get("s0.v1.weight"), "2")
		is.Equal(form.Get("s0.pick_metric"), "reply_rate")
		is.Equal(form.Get("s0.subject"), "") // the variants hold the texts
		is.Equal(builderPost(boss, q.ID, "save", form).code, http.StatusSeeOther)
		after := stored()
		is.Equal(after.Steps[0].Variants, q.Steps[0].Variants)
		is.Equal(*after.Steps[0].PickWinner, *q.Steps[0].PickWinner)
		is.Equal(after.Steps[1].Body, "A nudge.")

		// The nudge's text becomes variant a; b is added, typed in, saved.
		form = formValues(t, boss.get(path).body, "builder")
		is.Equal(builderPost(boss, q.ID, "variant:1", form).code, http.StatusSeeOther)
		page = boss.get(path)
		form = formValues(t, page.body, "builder")
		is.Equal(form.Get("s1.variants"), "2")
		is.Equal(form.Get("s1.v0.body"), "A nudge.")
		is.Equal(form.Get("s1.v1.id"), "b")
		form.Set("s1.v1.body", "Another nudge.")
		is.Equal(builderPost(boss, q.ID, "save", form).code, http.StatusSeeOther)
		nudge := stored().Steps[1]
		is.Equal(len(nudge.Variants), 2)
		is.Equal(nudge.Body, "")
		is.Equal(nudge.Variants[1].Body, "Another nudge.")

		// A confidence that is not a number: refused, nothing changed.
		form = formValues(t, boss.get(path).body, "builder")
		form.Set("s0.pick_confidence", "sure")
		r := builderPost(boss, q.ID, "save", form)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "confidence"))
		is.Equal(*stored().Steps[0].PickWinner, *q.Steps[0].PickWinner)

		// Removing b leaves one: the step has its text again, no test.
		form = formValues(t, boss.get(path).body, "builder")
		is.Equal(builderPost(boss, q.ID, "dropvariant:1.1", form).code, http.StatusSeeOther)
		nudge = stored().Steps[1]
		is.Equal(len(nudge.Variants), 0)
		is.Equal(nudge.Body, "A nudge.")
		is.True(nudge.PickWinner == nil)
	})
}
