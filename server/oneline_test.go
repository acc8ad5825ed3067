package server

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// lineBreaking are values no one-line field takes: a header injection,
// a tab, a Unicode line separator, DEL and NEL (a C1 control).
var lineBreaking = []string{"a\r\nBcc: x@evil.test", "a\tb", "a\u2028b", "a\x7fb", "a\u0085b"}

// TestOneLineFields sends every value of lineBreaking in every one-line
// field of the API, body and query alike: each gets 422 naming the field
// and changes nothing. Multi-line fields keep their line breaks, and a
// reply's inherited subject never carries one.
func TestOneLineFields(t *testing.T) {
	t.Parallel()
	eachEnv(t, RateLimits{Read: 100000, Write: 100000, Spend: 100000}, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		m := e.mailAnnAndCy(t)
		var annThread string
		is.NoErr(e.db.NewSelect().Table("threads").Column("id").Where("lead_id = ?", m.ann).Scan(ctx, &annThread))
		leadsBefore := e.leadCount()
		refused := func(method, path, key string, body any, field string) {
			t.Helper()
			r := e.call(method, path, key, body)
			assertEnvelope(t, r, 422, apikit.EPayloadInvalid)
			if msg := r.Body["error"].(map[string]any)["message"].(string); !strings.HasPrefix(msg, field+" holds ") {
				t.Fatalf("%s %s: the message does not name %s: %s", method, path, field, msg)
			}
		}
		for _, bad := range lineBreaking {
			for _, f := range []string{"name", "company", "headline", "location", "source", "email_work", "email_personal",
				"public_identifier", "linkedin_url", "linkedin_id", "provider_id"} {
				refused("POST", "/v1/leads", "member", map[string]any{"email_work": "new@example.test", f: bad}, f)
				refused("PATCH", "/v1/leads/"+m.ann, "member", map[string]any{f: bad}, f)
			}
			refused("POST", "/v1/threads/"+annThread+"/reply", "member", map[string]any{"body": "Hi", "subject": bad}, "subject")
			hook := map[string]any{"url": "https://127.0.0.1/hook", "events": []string{"*"}, "description": "ok"}
			for _, f := range []string{"url", "description"} {
				b := map[string]any{}
				for k, v := range hook {
					b[k] = v
				}
				b[f] = bad
				refused("POST", "/v1/webhooks", "manager", b, f)
			}
			refused("POST", "/v1/webhooks", "manager", map[string]any{"url": "https://127.0.0.1/hook", "events": []string{bad}}, "events[0]")
			for _, f := range []string{"emails", "linkedin_ids", "public_identifiers"} {
				refused("POST", "/v1/suppressions", "member", map[string]any{f: []string{"ok@example.test", bad}}, f+"[1]")
			}
			refused("POST", "/v1/suppressions", "member", map[string]any{"emails": []string{"ok@example.test"}, "reason": bad}, "reason")
			for _, q := range []string{"q", "source", "email", "public_identifier"} {
				refused("GET", "/v1/leads?"+q+"="+url.QueryEscape(bad), "viewer", nil, q)
			}
			refused("GET", "/v1/reports/sequences?sort="+url.QueryEscape(bad), "viewer", nil, "sort")
		}
		// Nothing changed.
		is.Equal(e.leadCount(), leadsBefore)
		is.Equal(e.call("GET", "/v1/webhooks", "manager", nil).Body["total"], 0.0)
		is.Equal(e.call("GET", "/v1/leads/"+m.ann, "viewer", nil).data()["do_not_contact"], false)
		is.Equal(e.call("GET", "/v1/threads/"+annThread, "viewer", nil).data()["message_count"], 1.0)

		// Multi-line fields keep their line breaks (and a lead's free-form
		// custom fields are not one-line fields).
		body := "Thanks, Ann!\r\n\r\n\tSee you Thursday.\u2028Bo"
		r := e.call("POST", "/v1/threads/"+annThread+"/reply", "member", map[string]any{"body": body, "subject": "Re: Hello Ann"})
		is.Equal(r.Status, 200)
		is.Equal(r.data()["body"], body)
		r = e.call("PATCH", "/v1/leads/"+m.ann, "member", map[string]any{"custom": map[string]any{"bio": "line one\nline two"}})
		is.Equal(r.Status, 200)
		is.Equal(r.data()["custom"].(map[string]any)["bio"], "line one\nline two")

		// A subject stored with a line break (from a provider, or before
		// this rule) is inherited as one line.
		_, err := e.db.NewUpdate().Table("messages").Set("subject = ?", "Hello Ann\r\nBcc: x@evil.test").Where("thread_id = ?", annThread).Exec(ctx)
		is.NoErr(err)
		r = e.call("POST", "/v1/threads/"+annThread+"/reply", "member", map[string]any{"body": "One more thing."})
		is.Equal(r.Status, 200)
		is.Equal(r.data()["subject"], "Re: Hello Ann Bcc: x@evil.test")
	})
}

// TestOneLineFieldsInTheLibrary calls the areas' services as a Go program
// does, without the HTTP layer: they refuse the same values.
func TestOneLineFieldsInTheLibrary(t *testing.T) {
	t.Parallel()
	eachEnv(t, DefaultRateLimits, func(t *testing.T, e *env) {
		is := is.New(t)
		ctx := context.Background()
		p, err := e.ws.Authenticate(ctx, e.keys["manager"])
		is.NoErr(err)
		pctx := apikit.WithPrincipal(ctx, p)
		str := func(s string) *string { return &s }
		for _, bad := range lineBreaking {
			for name, call := range map[string]func() error{
				"name": func() error {
					_, err := e.srv.leads.Upsert(pctx, p, leads.LeadInput{LinkedInID: str("lib-1"), Name: str(bad)})
					return err
				},
				"reason": func() error {
					_, err := e.srv.leads.AddSuppressions(pctx, p, leads.SuppressionsInput{Emails: []string{"a@example.test"}, Reason: bad})
					return err
				},
				"subject": func() error {
					_, err := e.srv.inbox.Reply(pctx, p, apikit.NewID(), inbox.ReplyInput{Body: "Hi", Subject: bad})
					return err
				},
				"description": func() error {
					_, err := e.srv.webhooks.Create(pctx, p, webhooks.CreateInput{URL: "https://127.0.0.1/hook", Events: []string{"*"}, Description: bad})
					return err
				},
				"name ": func() error {
					_, _, err := e.ws.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "boss@acme.test", Role: apikit.RoleMember, Name: bad})
					return err
				},
				"clients[0]": func() error {
					_, err := e.ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{Name: "acme", Clients: []string{bad}}}})
					return err
				},
			} {
				err := call()
				is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
				is.True(strings.Contains(apikit.AsError(err).Message, strings.TrimSpace(name)+" holds "))
			}
		}
		// A task's note is a multi-line field: only text no database can
		// store is refused.
		_, err = e.srv.tasks.Complete(pctx, p, apikit.NewID(), tasks.CompleteInput{Outcome: tasks.Done, Note: "a\x00"})
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		_, err = e.srv.tasks.Complete(pctx, p, apikit.NewID(), tasks.CompleteInput{Outcome: tasks.Done, Note: "line one\nline two"})
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound) // past the text check
	})
}
