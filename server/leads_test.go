package server

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
)

func (e *env) lead(key string, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.call("POST", "/v1/leads", key, body)
	if r.Status != 201 && r.Status != 200 {
		e.t.Fatalf("create lead: %d %s", r.Status, r.Raw)
	}
	return r.data()
}

func TestUpsertRules(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		r := e.call("POST", "/v1/leads", "member", map[string]any{
			"email_work": "  Ann.Lee@Acme.test ", "name": "Ann Lee", "company": "Acme", "source": "csv",
			"linkedin_url": "https://www.linkedin.com/in/Ann-Lee/?trk=x", "custom": map[string]any{"size": 50, "city": "Berlin"},
		})
		is.Equal(r.Status, 201)
		is.Equal(r.Body["created"], true)
		is.Equal(r.Body["unchanged_fields"], []any{})
		ann := r.data()
		is.Equal(ann["email_work"], "Ann.Lee@Acme.test") // trimmed
		is.Equal(ann["public_identifier"], "ann-lee")    // derived from linkedin_url
		for _, f := range []string{"tags", "sender_state", "enrollments"} {
			is.Equal(ann[f], []any{})
		}
		is.Equal(ann["profile"], nil)
		id := ann["id"].(string)

		t.Run("match by email is case-insensitive; only sent fields change", func(t *testing.T) {
			is := is.New(t)
			r := e.call("POST", "/v1/leads", "member", map[string]any{
				"email_work": "ann.lee@ACME.test", "headline": "CTO", "name": "", "company": nil,
				"custom": map[string]any{"size": 60, "city": nil, "team": "core"},
			})
			is.Equal(r.Status, 200)
			is.Equal(r.Body["created"], false)
			d := r.data()
			is.Equal(d["id"], id)
			is.Equal(d["headline"], "CTO")
			is.Equal(d["name"], "Ann Lee") // empty string counts as left out
			is.Equal(d["company"], "Acme") // null counts as left out
			is.Equal(d["source"], "csv")   // not sent, never blanked
			is.Equal(d["custom"], map[string]any{"size": float64(60), "team": "core"})
			is.Equal(r.Body["unchanged_fields"], []any{})
		})
		t.Run("fill-only fields keep their first value", func(t *testing.T) {
			is := is.New(t)
			r := e.call("POST", "/v1/leads", "member", map[string]any{
				"email_work": "ann.lee@acme.test", "public_identifier": "someone-else", "email_personal": "ann@home.test",
				"client_id": e.ids["Globex"],
			})
			is.Equal(r.Status, 200)
			d := r.data()
			is.Equal(d["public_identifier"], "ann-lee")
			is.Equal(d["email_personal"], "ann@home.test") // empty: filled
			is.Equal(d["client_id"], e.ids["Globex"])      // empty: filled
			is.Equal(r.Body["unchanged_fields"], []any{"public_identifier"})
			r = e.call("POST", "/v1/leads", "member", map[string]any{
				"email_work": "ann.lee@acme.test", "email_personal": "other@home.test", "client_id": e.ids["Initech"],
			})
			is.Equal(r.Body["unchanged_fields"], []any{"client_id", "email_personal"})
			is.Equal(r.data()["client_id"], e.ids["Globex"])
		})
		t.Run("matching order: LinkedIn id, provider id, work email, personal email", func(t *testing.T) {
			is := is.New(t)
			byLinkedIn := e.lead("member", map[string]any{"linkedin_id": "LI-1", "name": "By LinkedIn"})
			byProvider := e.lead("member", map[string]any{"provider_id": "PR-1", "name": "By provider"})
			byPersonal := e.lead("member", map[string]any{"email_personal": "bob@home.test", "name": "By personal"})
			for _, c := range []struct {
				body map[string]any
				want string
			}{
				{map[string]any{"linkedin_id": "LI-1", "email_work": "ann.lee@acme.test"}, byLinkedIn["id"].(string)},
				{map[string]any{"provider_id": "PR-1", "email_work": "ann.lee@acme.test"}, byProvider["id"].(string)},
				{map[string]any{"email_work": "ann.lee@acme.test", "email_personal": "bob@home.test"}, id},
				{map[string]any{"email_personal": "BOB@home.test"}, byPersonal["id"].(string)},
				{map[string]any{"public_identifier": "ann-lee"}, id}, // only when none of the four is sent
			} {
				r := e.call("POST", "/v1/leads", "member", c.body)
				is.Equal(r.Status, 200)
				is.Equal(r.data()["id"], c.want)
			}
			// Filling the matched lead's empty work email with another lead's
			// address would give two leads one identity: it stays empty.
			r := e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": "LI-1", "email_work": "ANN.LEE@acme.test"})
			is.Equal(r.data()["email_work"], nil)
			is.Equal(r.Body["unchanged_fields"], []any{"email_work"})
		})
		t.Run("matching never crosses workspaces", func(t *testing.T) {
			is := is.New(t)
			r := e.call("POST", "/v1/leads", "other", map[string]any{"email_work": "ann.lee@acme.test"})
			is.Equal(r.Status, 201)
			is.True(r.data()["id"] != id)
		})
		t.Run("bad input changes nothing", func(t *testing.T) {
			for name, body := range map[string]any{
				"unknown field": map[string]any{"email_work": "ann.lee@acme.test", "nickname": "A"},
				"no identity":   map[string]any{"name": "Nobody"},
				"bad email":     map[string]any{"email_work": "not-an-email"},
				"bad url":       map[string]any{"linkedin_url": "https://example.com/in/x"},
				"unknown stage": map[string]any{"email_work": "ann.lee@acme.test", "stage_id": apikit.NewID()},
				"bad list id":   map[string]any{"email_work": "ann.lee@acme.test", "list_id": "Berlin"},
			} {
				t.Run(name, func(t *testing.T) {
					assertEnvelope(t, e.call("POST", "/v1/leads", "member", body), 422, apikit.EPayloadInvalid)
				})
			}
			r := e.call("POST", "/v1/leads", "member", map[string]any{"email_work": "ann.lee@acme.test", "stage_id": apikit.NewID()})
			is.New(t).True(strings.Contains(r.Body["error"].(map[string]any)["remedy"].(string), "GET /v1/me"))
		})
		t.Run("patch", func(t *testing.T) {
			is := is.New(t)
			r := e.call("PATCH", "/v1/leads/"+id, "member", map[string]any{"location": "Berlin", "email_work": "new@acme.test", "stage_id": e.ids["New"]})
			is.Equal(r.Status, 200)
			is.Equal(r.data()["location"], "Berlin")
			is.Equal(r.data()["stage_id"], e.ids["New"])
			is.Equal(r.Body["unchanged_fields"], []any{"email_work"})
			_, hasCreated := r.Body["created"]
			is.True(!hasCreated)
			assertEnvelope(t, e.call("PATCH", "/v1/leads/"+apikit.NewID(), "member", map[string]any{"name": "x"}), 404, apikit.ENotFound)
			assertEnvelope(t, e.call("PATCH", "/v1/leads/"+id, "member", map[string]any{"linkedin_id": "LI-1"}), 409, apikit.EConflict)
		})
	})
}

func TestClientScope(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		initech := e.lead("member", map[string]any{"linkedin_id": "init-1", "email_work": "i@initech.test", "client_id": e.ids["Initech"]})
		unassigned := e.lead("member", map[string]any{"linkedin_id": "none-1"})

		// A key scoped to one client defaults to it.
		r := e.call("POST", "/v1/leads", "globex", map[string]any{"linkedin_id": "glob-1", "name": "G One"})
		is.Equal(r.Status, 201)
		is.Equal(r.data()["client_id"], e.ids["Globex"])
		glob := r.data()["id"].(string)

		// A scoped key whose input matches another client's lead gets 409 and nothing else.
		for _, body := range []map[string]any{
			{"linkedin_id": "init-1", "name": "Hijack"},
			{"email_work": "I@initech.test"},
			{"linkedin_id": "none-1"},
		} {
			r := e.call("POST", "/v1/leads", "globex", body)
			assertEnvelope(t, r, 409, apikit.EConflict)
			is.True(!strings.Contains(string(r.Raw), initech["id"].(string)))
		}
		is.Equal(e.call("GET", "/v1/leads/"+initech["id"].(string), "member", nil).data()["name"], nil) // unchanged
		is.Equal(e.call("GET", "/v1/leads?linkedin_id=x", "member", nil).Status, 422)                   // (unknown parameter)
		is.Equal(e.call("GET", "/v1/leads", "member", nil).Body["total"], float64(3))                   // nothing duplicated

		// Its new lead must belong to a client in its scope.
		assertEnvelope(t, e.call("POST", "/v1/leads", "globex", map[string]any{"linkedin_id": "g2", "client_id": e.ids["Initech"]}), 403, apikit.EForbidden)
		assertEnvelope(t, e.call("POST", "/v1/leads", "twoClients", map[string]any{"linkedin_id": "g3"}), 422, apikit.EPayloadInvalid)
		is.Equal(e.call("POST", "/v1/leads", "twoClients", map[string]any{"linkedin_id": "g3", "client_id": e.ids["Initech"]}).Status, 201)

		for _, key := range []string{"globex", "globexViewer"} {
			t.Run(key, func(t *testing.T) {
				is := is.New(t)
				list := e.call("GET", "/v1/leads", key, nil)
				is.Equal(list.Body["total"], float64(1))
				is.Equal(list.Body["data"].([]any)[0].(map[string]any)["id"], glob)
				assertEnvelope(t, e.call("GET", "/v1/leads?client_id="+e.ids["Initech"], key, nil), 403, apikit.EForbidden)
				is.Equal(e.call("GET", "/v1/leads?client_id="+e.ids["Globex"], key, nil).Body["total"], float64(1))
				for _, other := range []string{initech["id"].(string), unassigned["id"].(string)} {
					assertEnvelope(t, e.call("GET", "/v1/leads/"+other, key, nil), 404, apikit.ENotFound)
					assertEnvelope(t, e.call("GET", "/v1/leads/"+other+"/timeline", key, nil), 404, apikit.ENotFound)
				}
				is.Equal(e.call("GET", "/v1/leads/"+glob, key, nil).Status, 200)
			})
		}
		t.Run("scoped member cannot change other clients' leads", func(t *testing.T) {
			other := initech["id"].(string)
			for _, c := range []struct {
				method, path string
				body         any
			}{
				{"PATCH", "/v1/leads/" + other, map[string]any{"name": "x"}},
				{"POST", "/v1/leads/" + other + "/tags", map[string]any{"tag_id": e.ids["vip"]}},
				{"DELETE", "/v1/leads/" + other + "/tags/" + e.ids["vip"], nil},
				{"PUT", "/v1/leads/" + other + "/stage", map[string]any{"stage_id": nil}},
				{"PUT", "/v1/leads/" + other + "/list", map[string]any{"list_id": nil}},
				{"POST", "/v1/leads/" + other + "/suppress", nil},
				{"DELETE", "/v1/leads/" + other + "/suppress", nil},
			} {
				assertEnvelope(t, e.call(c.method, c.path, "globex", c.body), 404, apikit.ENotFound)
			}
			assertEnvelope(t, e.call("POST", "/v1/leads/enrich", "globex", map[string]any{"lead_ids": []string{other}}), 422, apikit.EPayloadInvalid)
			assertEnvelope(t, e.call("POST", "/v1/suppressions", "globex", map[string]any{"emails": []string{"a@b.test"}}), 403, apikit.EForbidden)
		})
		t.Run("client_viewer writes nothing", func(t *testing.T) {
			for _, c := range []struct{ method, path string }{
				{"POST", "/v1/leads"}, {"PATCH", "/v1/leads/" + glob}, {"POST", "/v1/leads/" + glob + "/suppress"},
				{"POST", "/v1/leads/enrich"}, {"POST", "/v1/suppressions"}, {"PUT", "/v1/leads/" + glob + "/stage"},
			} {
				assertEnvelope(t, e.call(c.method, c.path, "globexViewer", map[string]any{}), 403, apikit.EForbidden)
			}
		})
	})
}

func TestListLeads(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		mk := func(i int, extra map[string]any) string {
			body := map[string]any{"linkedin_id": fmt.Sprintf("L%02d", i), "name": fmt.Sprintf("Person %02d", i), "company": "Generic GmbH"}
			for k, v := range extra {
				body[k] = v
			}
			return e.lead("member", body)["id"].(string)
		}
		var ids []string
		for i := 0; i < 23; i++ {
			ids = append(ids, mk(i, nil))
		}
		e.clock.Advance(time.Hour)
		since := e.clock.Now()
		special := map[string]string{
			"zoe":    mk(30, map[string]any{"name": "Zoë Ångström", "headline": "Head of Platform", "source": "event", "client_id": e.ids["Globex"], "list_id": e.ids["Berlin CTOs"], "stage_id": e.ids["Qualified"]}),
			"wolf":   mk(31, map[string]any{"company": "Wolfram Research", "email_work": "Max@Wolfram.test", "email_personal": "max@home.test"}),
			"pubid":  mk(32, map[string]any{"linkedin_url": "linkedin.com/in/jane-doe"}),
			"tagged": mk(33, nil),
		}
		e.call("POST", "/v1/leads/"+special["tagged"]+"/tags", "member", map[string]any{"tag_id": e.ids["vip"]})
		ids = append(ids, special["zoe"], special["wolf"], special["pubid"], special["tagged"])

		t.Run("envelope and stable paging", func(t *testing.T) {
			is := is.New(t)
			seen := map[string]bool{}
			var order []string
			for offset := 0; ; offset += 10 {
				r := e.call("GET", fmt.Sprintf("/v1/leads?limit=10&offset=%d", offset), "viewer", nil)
				is.Equal(r.Status, 200)
				for _, k := range []string{"data", "total", "limit", "offset", "has_more"} {
					_, ok := r.Body[k]
					is.True(ok) // all five envelope fields
				}
				is.Equal(r.Body["total"], float64(27))
				is.Equal(r.Body["limit"], float64(10))
				is.Equal(r.Body["offset"], float64(offset))
				for _, l := range r.Body["data"].([]any) {
					id := l.(map[string]any)["id"].(string)
					is.True(!seen[id]) // never repeated
					seen[id] = true
					order = append(order, id)
				}
				if !r.Body["has_more"].(bool) {
					break
				}
			}
			is.Equal(len(seen), 27)                                                                // never skipped
			is.True(sort.SliceIsSorted(order, func(i, j int) bool { return order[i] > order[j] })) // newest first
			r := e.call("GET", "/v1/leads", "viewer", nil)
			is.Equal(r.Body["limit"], float64(50))
			is.Equal(r.Body["offset"], float64(0))
			is.Equal(e.call("GET", "/v1/leads?offset=100", "viewer", nil).Body["data"], []any{})
			for _, q := range []string{"limit=0", "limit=201", "offset=-1", "limit=abc"} {
				assertEnvelope(t, e.call("GET", "/v1/leads?"+q, "viewer", nil), 422, apikit.EPayloadInvalid)
			}
		})
		count := func(query string) float64 {
			t.Helper()
			r := e.call("GET", "/v1/leads?"+query, "viewer", nil)
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", query, r.Status, r.Raw)
			}
			return r.Body["total"].(float64)
		}
		t.Run("filters", func(t *testing.T) {
			is := is.New(t)
			for q, want := range map[string]float64{
				"client_id=" + e.ids["Globex"]:                                 1,
				"list_id=" + e.ids["Berlin CTOs"]:                              1,
				"stage_id=" + e.ids["Qualified"]:                               1,
				"tag_id=" + e.ids["vip"]:                                       1,
				"source=event":                                                 1,
				"email=max@wolfram.TEST":                                       1,
				"email=MAX@home.test":                                          1,
				"public_identifier=Jane-Doe":                                   1,
				"updated_since=" + url.QueryEscape(since.Format(time.RFC3339)): 4 + 0,
				"replied=false":                                                27,
				"replied=true":                                                 0,
				"enriched=false":                                               27,
				"enriched=true":                                                0,
				"source=event&client_id=" + e.ids["Globex"]:                    1,
				"source=event&stage_id=" + e.ids["New"]:                        0,
			} {
				is.Equal(count(q), want)
			}
		})
		t.Run("q", func(t *testing.T) {
			is := is.New(t)
			for q, want := range map[string]float64{
				"person 0":  10, // name, case-insensitive
				"WOLFRAM":   1,  // company
				"of platf":  1,  // headline
				"max@wolf":  1,  // work email
				"home.test": 0,  // personal email is not searched
				"zoë":       1,  // non-ASCII
				"ångström":  1,
				"gmbh":      26,
				"Pe":        26, // short queries work too
				"%":         0,
				`"quoted"`:  0,
				"person 01": 1,
			} {
				if got := count("q=" + url.QueryEscape(q)); got != want {
					t.Errorf("q=%q: %v leads, want %v", q, got, want)
				}
			}
			is.Equal(count("q=person&limit=5"), float64(26))
			seen := map[string]bool{}
			for offset := 0; offset < 26; offset += 7 { // search pages are stable too
				r := e.call("GET", fmt.Sprintf("/v1/leads?q=person&limit=7&offset=%d", offset), "viewer", nil)
				for _, l := range r.Body["data"].([]any) {
					id := l.(map[string]any)["id"].(string)
					is.True(!seen[id])
					seen[id] = true
				}
			}
			is.Equal(len(seen), 26)
		})
	})
}

func TestTagsStageListSuppress(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		id := e.lead("member", map[string]any{"linkedin_id": "T1"})["id"].(string)
		base := "/v1/leads/" + id

		r := e.call("POST", base+"/tags", "member", map[string]any{"tag_ids": []string{e.ids["vip"], e.ids["cold"]}})
		is.Equal(r.Status, 200)
		is.Equal(len(r.data()["tags"].([]any)), 2)
		r = e.call("POST", base+"/tags", "member", map[string]any{"tag_id": e.ids["vip"]}) // already there
		is.Equal(len(r.data()["tags"].([]any)), 2)
		assertEnvelope(t, e.call("POST", base+"/tags", "member", map[string]any{"tag_ids": make21()}), 422, apikit.ETooMany)
		assertEnvelope(t, e.call("POST", base+"/tags", "member", map[string]any{}), 422, apikit.EPayloadInvalid)
		assertEnvelope(t, e.call("POST", base+"/tags", "member", map[string]any{"tag_id": e.ids["vip"], "stage_id": nil}), 422, apikit.EPayloadInvalid)
		r = e.call("POST", base+"/tags", "member", map[string]any{"tag_id": apikit.NewID()})
		assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
		is.True(strings.Contains(string(r.Raw), "GET /v1/me"))
		r = e.call("DELETE", base+"/tags/"+e.ids["cold"], "member", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.data()["tags"], []any{map[string]any{"id": e.ids["vip"], "name": "vip"}})
		is.Equal(e.call("DELETE", base+"/tags/"+e.ids["cold"], "member", nil).Status, 200) // not on the lead: no-op
		r = e.call("DELETE", base+"/tags/"+apikit.NewID(), "member", nil)
		assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
		is.True(strings.Contains(string(r.Raw), "GET /v1/me"))

		r = e.call("PUT", base+"/stage", "member", map[string]any{"stage_id": e.ids["Contacted"]})
		is.Equal(r.data()["stage_id"], e.ids["Contacted"])
		r = e.call("PUT", base+"/stage", "member", map[string]any{"stage_id": nil})
		is.Equal(r.Status, 200)
		is.Equal(r.data()["stage_id"], nil)
		assertEnvelope(t, e.call("PUT", base+"/stage", "member", map[string]any{}), 422, apikit.EPayloadInvalid) // required
		assertEnvelope(t, e.call("PUT", base+"/stage", "member", map[string]any{"stage_id": e.ids["Berlin CTOs"]}), 422, apikit.EPayloadInvalid)
		r = e.call("PUT", base+"/list", "member", map[string]any{"list_id": e.ids["Paris CFOs"]})
		is.Equal(r.data()["list_id"], e.ids["Paris CFOs"])
		is.Equal(e.call("PUT", base+"/list", "member", map[string]any{"list_id": nil}).data()["list_id"], nil)

		r = e.call("POST", base+"/suppress", "member", nil)
		is.Equal(r.Status, 200)
		is.Equal(r.data()["do_not_contact"], true)
		is.True(r.data()["do_not_contact_at"] != nil)
		is.Equal(e.call("GET", base, "viewer", nil).data()["do_not_contact"], true) // kept, not deleted
		r = e.call("DELETE", base+"/suppress", "member", nil)
		is.Equal(r.data()["do_not_contact"], false)

		var kinds []string
		tl := e.call("GET", base+"/timeline", "viewer", nil)
		is.Equal(tl.Status, 200)
		var last string
		for _, ev := range tl.Body["data"].([]any) {
			m := ev.(map[string]any)
			kinds = append(kinds, m["kind"].(string))
			if last != "" {
				is.True(m["created_at"].(string) <= last) // newest first
			}
			last = m["created_at"].(string)
			is.True(m["member_id"] != nil)
		}
		is.Equal(kinds, []string{"lead.unsuppressed", "lead.suppressed", "lead.list_changed", "lead.list_changed",
			"lead.stage_changed", "lead.stage_changed", "lead.untagged", "lead.tagged", "lead.tagged", "lead.created"})
	})
}

func TestEnrich(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		a := e.lead("member", map[string]any{"linkedin_id": "E1"})["id"].(string)
		b := e.lead("member", map[string]any{"provider_id": "P2"})["id"].(string)
		c := e.lead("member", map[string]any{"email_work": "c@x.test"})["id"].(string)
		fresh := e.lead("member", map[string]any{"linkedin_id": "E4"})["id"].(string)
		old := e.lead("member", map[string]any{"linkedin_id": "E5"})["id"].(string)
		now := e.clock.Now()
		for id, at := range map[string]time.Time{fresh: now.Add(-89 * 24 * time.Hour), old: now.Add(-91 * 24 * time.Hour)} {
			if _, err := e.db.NewRaw("UPDATE leads SET enriched_at = ? WHERE id = ?", at, id).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		r := e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []string{a, b, c, fresh, old, a}, "want_posts": true})
		is.Equal(r.Status, 202)
		d := r.data()
		is.Equal(d["queued"], float64(3)) // a, b, old
		is.Equal(d["skipped_fresh"], float64(1))
		is.Equal(d["skipped_no_linkedin_id"], float64(1))
		is.True(len(d["note"].(string)) > 20)
		r = e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []string{fresh}, "force": true})
		is.Equal(r.data()["queued"], float64(1))
		tl := e.call("GET", "/v1/leads/"+a+"/timeline", "viewer", nil).Body["data"].([]any)
		is.Equal(tl[0].(map[string]any)["kind"], "lead.enrichment_queued")

		many := make([]string, 5001)
		for i := range many {
			many[i] = apikit.NewID()
		}
		assertEnvelope(t, e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": many}), 422, apikit.ETooMany)
		assertEnvelope(t, e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []string{}}), 422, apikit.EPayloadInvalid)
		assertEnvelope(t, e.call("POST", "/v1/leads/enrich", "member", map[string]any{}), 422, apikit.EPayloadInvalid)
		assertEnvelope(t, e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []string{a}, "priority": 1}), 422, apikit.EPayloadInvalid)
		assertEnvelope(t, e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []string{a, apikit.NewID()}}), 422, apikit.EPayloadInvalid)
		assertEnvelope(t, e.call("POST", "/v1/leads/enrich", "member", map[string]any{"lead_ids": []string{"nope"}}), 422, apikit.EPayloadInvalid)
	})
}

func TestDoNotContact(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		existing := e.lead("member", map[string]any{"email_work": "Gone@x.test"})["id"].(string)
		byID := e.lead("member", map[string]any{"linkedin_id": "byid"})["id"].(string)
		r := e.call("POST", "/v1/suppressions", "member", map[string]any{
			"emails": []string{"gone@X.test", "future@x.test", " "}, "linkedin_ids": []string{"LI-future"},
			"public_identifiers": []string{"Future-Person"}, "lead_ids": []string{byID}, "reason": "asked to stop",
		})
		is.Equal(r.Status, 200)
		is.Equal(r.data(), map[string]any{"added": float64(5), "already_present": float64(0), "leads_suppressed": float64(2)})
		is.Equal(e.call("GET", "/v1/leads/"+existing, "viewer", nil).data()["do_not_contact"], true)
		r = e.call("POST", "/v1/suppressions", "member", map[string]any{"emails": []string{"future@x.test"}})
		is.Equal(r.data(), map[string]any{"added": float64(0), "already_present": float64(1), "leads_suppressed": float64(0)})

		for _, body := range []map[string]any{
			{"email_personal": "FUTURE@x.test"},
			{"linkedin_id": "LI-future"},
			{"linkedin_url": "https://linkedin.com/in/future-person"},
			{"email_work": "ceo@umbrella.test"},          // blacklisted domain
			{"linkedin_id": "u2", "company": "UMBRELLA"}, // blacklisted company
			{"public_identifier": "evil-corp-ceo"},       // blacklisted LinkedIn identifier
		} {
			r := e.call("POST", "/v1/leads", "member", body)
			is.Equal(r.Status, 201)
			is.Equal(r.data()["do_not_contact"], true) // stored as do-not-contact
		}
		is.Equal(e.lead("member", map[string]any{"linkedin_id": "fine"})["do_not_contact"], false)

		many := make([]string, 5001)
		for i := range many {
			many[i] = fmt.Sprintf("p%d@x.test", i)
		}
		assertEnvelope(t, e.call("POST", "/v1/suppressions", "member", map[string]any{"emails": many}), 422, apikit.ETooMany)
		assertEnvelope(t, e.call("POST", "/v1/suppressions", "member", map[string]any{}), 422, apikit.EPayloadInvalid)
		assertEnvelope(t, e.call("POST", "/v1/suppressions", "member", map[string]any{"emails": []string{"bad"}}), 422, apikit.EPayloadInvalid)
		assertEnvelope(t, e.call("POST", "/v1/suppressions", "member", map[string]any{"lead_ids": []string{apikit.NewID()}}), 422, apikit.EPayloadInvalid)
	})
}
