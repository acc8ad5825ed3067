package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

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
