// Command live is the last part of leadline's OpenAPI CI step
// (.ci/openapi): it starts a real leadline server on loopback (SQLite in a
// temporary folder, the sandbox network, one key), calls operations through
// the oapi-codegen client and the ogen client generated from
// /v1/openapi.json, and checks what each decodes: the values it expects,
// and that the decoded answer, written out again, is the JSON the server
// sent (null and missing taken alike), so that no field is lost or misread.
//
// It is built in a module of its own, with both generated clients as its
// packages oapiclient and ogenapi, outside leadline's module: the
// generators' runtimes never enter leadline's go.mod. .ci/openapi
// assembles and runs it; by hand:
//
//	bash .ci/openapi
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/workspace"

	"leadline.test/live/oapiclient"
	api "leadline.test/live/ogenapi"
)

const setupFile = `
workspaces:
  - name: live
    timezone: Europe/Berlin
    plan: pro
    members: [{email: owner@live.test, role: owner}]
    clients: [Globex]
    tags: [vip]
    senders:
      - {name: anna, channel: linkedin, client: Globex, schedule: {mon-fri: ["09:00-17:00"]}}
`

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatalf("live: %v", err)
	}
	fmt.Println("live: both generated clients decode the server's answers")
}

// world is the running server and what it holds.
type world struct {
	url, key string
	leadID   string // a lead with a reply thread
	threadID string
}

func run(ctx context.Context) error {
	w, stop, err := start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	rec := &recorder{next: http.DefaultTransport}
	hc := &http.Client{Transport: rec}

	oc, err := oapiclient.NewClientWithResponses(w.url, oapiclient.WithHTTPClient(hc),
		oapiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+w.key)
			return nil
		}))
	if err != nil {
		return err
	}
	gc, err := api.NewClient(w.url, bearer(w.key), api.WithClient(hc))
	if err != nil {
		return err
	}
	c := &checks{rec: rec}
	c.oapi(ctx, oc, w)
	c.ogen(ctx, gc, w)
	if len(c.failed) > 0 {
		return errors.New("\n  " + strings.Join(c.failed, "\n  "))
	}
	return nil
}

// start serves leadline on a loopback port, with a workspace, a key, a
// lead and a reply from it.
func start(ctx context.Context) (*world, func(), error) {
	dir, err := os.MkdirTemp("", "leadline-live")
	if err != nil {
		return nil, nil, err
	}
	d, err := platform.OpenStore(ctx, filepath.Join(dir, "live.db"))
	if err != nil {
		return nil, nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	pl := platform.New(platform.Config{DB: d, Logger: quiet})
	f, err := setup.Decode(strings.NewReader(setupFile))
	if err != nil {
		return nil, nil, err
	}
	if _, err := setup.Apply(ctx, d, pl.Clock, pl.SecretKey, f); err != nil {
		return nil, nil, err
	}
	_, key, err := pl.Workspaces.CreateKey(ctx, workspace.KeyInput{Workspace: "live", MemberEmail: "owner@live.test", Role: apikit.RoleManager})
	if err != nil {
		return nil, nil, err
	}
	p, err := pl.Workspaces.Authenticate(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	ctx = apikit.WithPrincipal(ctx, p)
	lead, err := pl.Leads.Upsert(ctx, p, leads.LeadInput{Name: ptr("Ada Lovelace"), EmailWork: ptr("ada@engines.test"),
		LinkedInID: ptr("ada-lovelace"), Company: ptr("Analytical Engines")})
	if err != nil {
		return nil, nil, err
	}
	anna, err := pl.Senders.ByName(ctx, p.WorkspaceID, "anna")
	if err != nil {
		return nil, nil, err
	}
	var got *inbox.Received
	err = d.InTx(ctx, func(ctx context.Context) error {
		got, err = pl.Inbox.Receive(ctx, inbox.Arrived{WorkspaceID: p.WorkspaceID, Sender: anna, LeadID: lead.Lead.ID,
			ProviderMessageID: "live-1", Body: "Sounds interesting, could we talk on Tuesday afternoon?"})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: server.New(server.Config{Platform: pl, Logger: quiet}).Handler()}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	stop := func() {
		srv.Close()
		d.Close()
		os.RemoveAll(dir)
	}
	return &world{url: "http://" + ln.Addr().String(), key: key, leadID: lead.Lead.ID, threadID: got.Thread.ID}, stop, nil
}

func ptr[T any](v T) *T { return &v }

// bearer is the ogen client's credentials: the key as a bearer token.
type bearer string

func (b bearer) Bearer(context.Context, api.OperationName) (api.Bearer, error) {
	return api.Bearer{Token: string(b)}, nil
}

func (b bearer) ApiKey(context.Context, api.OperationName) (api.ApiKey, error) {
	return api.ApiKey{}, ogenerrors.ErrSkipClientSecurity
}

// The providers' webhook signatures are not this program's to give.

func (b bearer) CalcomSignature(context.Context, api.OperationName) (api.CalcomSignature, error) {
	return api.CalcomSignature{}, ogenerrors.ErrSkipClientSecurity
}

func (b bearer) CalendlySignature(context.Context, api.OperationName) (api.CalendlySignature, error) {
	return api.CalendlySignature{}, ogenerrors.ErrSkipClientSecurity
}

func (b bearer) UnipileSignature(context.Context, api.OperationName) (api.UnipileSignature, error) {
	return api.UnipileSignature{}, ogenerrors.ErrSkipClientSecurity
}

// recorder keeps the body of the last answer, for the comparisons.
type recorder struct {
	next http.RoundTripper
	last []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	r.last = body
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

type checks struct {
	rec    *recorder
	failed []string
}

func (c *checks) fail(format string, args ...any) {
	c.failed = append(c.failed, fmt.Sprintf(format, args...))
}

// expect records a failure when got is not want.
func (c *checks) expect(what string, got, want any) {
	if !reflect.DeepEqual(got, want) {
		c.fail("%s: got %v, want %v", what, got, want)
	}
}

// same checks that decoded, written out as JSON again, is the answer the
// server sent. Times compare to the second: ogen writes them out without
// their fraction (what it decodes keeps it; see the created_at checks).
func (c *checks) same(what string, decoded any) {
	b, err := json.Marshal(decoded)
	if err != nil {
		c.fail("%s: the decoded answer cannot be written out: %v", what, err)
		return
	}
	var sent, again any
	if err := json.Unmarshal(c.rec.last, &sent); err != nil {
		c.fail("%s: the answer is not JSON: %v", what, err)
		return
	}
	if err := json.Unmarshal(b, &again); err != nil {
		c.fail("%s: %v", what, err)
		return
	}
	if sent, again = normalize(sent), normalize(again); !reflect.DeepEqual(sent, again) {
		c.fail("%s: decoded and written out again, the answer differs:\n    sent:  %s\n    again: %s", what, c.rec.last, b)
	}
}

// normalize removes null members, so that a null the server sends and a
// member the client leaves out compare equal, and writes times to the
// second.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
			} else {
				t[k] = normalize(e)
			}
		}
	case []any:
		for i := range t {
			t[i] = normalize(t[i])
		}
	case string:
		if at, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return at.UTC().Truncate(time.Second).Format(time.RFC3339)
		}
	}
	return v
}

// sentCreatedAt is the created_at of the last answer's data, as sent.
func (c *checks) sentCreatedAt() time.Time {
	var body struct {
		Data struct {
			CreatedAt time.Time `json:"created_at"`
		} `json:"data"`
	}
	if err := json.Unmarshal(c.rec.last, &body); err != nil {
		c.fail("created_at: %v", err)
	}
	return body.Data.CreatedAt
}

// oapi calls the operations through the oapi-codegen client.
func (c *checks) oapi(ctx context.Context, oc *oapiclient.ClientWithResponses, w *world) {
	custom := map[string]any{"tier": "gold", "seats": 12.0}
	up, err := oc.UpsertLeadWithResponse(ctx, &oapiclient.UpsertLeadParams{}, oapiclient.LeadInput{Name: ptr("Grace Hopper"),
		EmailWork: ptr("grace@cobol.test"), Company: ptr("COBOL Ltd"), Custom: &custom})
	switch {
	case err != nil:
		c.fail("oapi-codegen upsert-lead: %v", err)
	case up.JSON201 == nil:
		c.fail("oapi-codegen upsert-lead: %d %s", up.StatusCode(), up.Body)
	default:
		c.same("oapi-codegen upsert-lead", up.JSON201)
		c.expect("oapi-codegen upsert-lead created", up.JSON201.Created, true)
		c.expect("oapi-codegen upsert-lead name", *up.JSON201.Data.Name, "Grace Hopper")
		c.expect("oapi-codegen upsert-lead custom", *up.JSON201.Data.Custom, custom)
		c.expect("oapi-codegen upsert-lead tags", len(up.JSON201.Data.Tags), 0)
	}

	id := uuid.MustParse(w.leadID)
	got, err := oc.GetLeadWithResponse(ctx, id)
	switch {
	case err != nil:
		c.fail("oapi-codegen get-lead: %v", err)
	case got.JSON200 == nil:
		c.fail("oapi-codegen get-lead: %d %s", got.StatusCode(), got.Body)
	default:
		c.same("oapi-codegen get-lead", got.JSON200)
		c.expect("oapi-codegen get-lead created_at", got.JSON200.Data.CreatedAt.Equal(c.sentCreatedAt()), true)
		c.expect("oapi-codegen get-lead id", got.JSON200.Data.Id, id)
		c.expect("oapi-codegen get-lead email", *got.JSON200.Data.EmailWork, "ada@engines.test")
		c.expect("oapi-codegen get-lead profile", got.JSON200.Data.Profile, (*map[string]any)(nil))
	}

	list, err := oc.ListLeadsWithResponse(ctx, &oapiclient.ListLeadsParams{Email: ptr("ADA@engines.test"), Limit: ptr(int64(10))})
	switch {
	case err != nil:
		c.fail("oapi-codegen list-leads: %v", err)
	case list.JSON200 == nil:
		c.fail("oapi-codegen list-leads: %d %s", list.StatusCode(), list.Body)
	default:
		c.same("oapi-codegen list-leads", list.JSON200)
		c.expect("oapi-codegen list-leads total", list.JSON200.Total, int64(1))
		if len(list.JSON200.Data) == 1 {
			c.expect("oapi-codegen list-leads lead", list.JSON200.Data[0].Id, id)
		}
		c.expect("oapi-codegen list-leads X-Request-Id", list.HTTPResponse.Header.Get("X-Request-Id") != "", true)
	}

	threads, err := oc.ListThreadsWithResponse(ctx, &oapiclient.ListThreadsParams{Limit: ptr(int64(20))})
	switch {
	case err != nil:
		c.fail("oapi-codegen list-threads: %v", err)
	case threads.JSON200 == nil:
		c.fail("oapi-codegen list-threads: %d %s", threads.StatusCode(), threads.Body)
	default:
		c.same("oapi-codegen list-threads", threads.JSON200)
		c.expect("oapi-codegen list-threads total", threads.JSON200.Total, int64(1))
		if len(threads.JSON200.Data) == 1 {
			t := threads.JSON200.Data[0]
			c.expect("oapi-codegen list-threads thread", t.Id.String(), w.threadID)
			c.expect("oapi-codegen list-threads lead", t.LeadId, id)
			c.expect("oapi-codegen list-threads messages", t.MessageCount, int64(1))
			c.expect("oapi-codegen list-threads intent set", t.Intent != nil, true)
		}
	}

	rep, err := oc.ReportOverviewWithResponse(ctx, &oapiclient.ReportOverviewParams{})
	switch {
	case err != nil:
		c.fail("oapi-codegen report-overview: %v", err)
	case rep.JSON200 == nil:
		c.fail("oapi-codegen report-overview: %d %s", rep.StatusCode(), rep.Body)
	default:
		c.same("oapi-codegen report-overview", rep.JSON200)
		c.expect("oapi-codegen report-overview timezone", rep.JSON200.Data.Timezone, "Europe/Berlin")
		c.expect("oapi-codegen report-overview totals", rep.JSON200.Data.Totals != nil, true)
	}

	missing, err := oc.GetLeadWithResponse(ctx, uuid.Must(uuid.NewV7()))
	switch {
	case err != nil:
		c.fail("oapi-codegen get-lead (missing): %v", err)
	case missing.JSON404 == nil:
		c.fail("oapi-codegen get-lead (missing): %d %s", missing.StatusCode(), missing.Body)
	default:
		c.same("oapi-codegen 404", missing.JSON404)
		c.expect("oapi-codegen 404 code", string(missing.JSON404.Error.Code), "E_NOT_FOUND")
		c.expect("oapi-codegen 404 request id", missing.JSON404.Error.RequestId, missing.HTTPResponse.Header.Get("X-Request-Id"))
		c.expect("oapi-codegen 404 remedy", missing.JSON404.Error.Remedy != "", true)
	}

	bad, err := oc.UpsertLeadWithResponse(ctx, &oapiclient.UpsertLeadParams{}, oapiclient.LeadInput{EmailWork: ptr("not-an-email")})
	switch {
	case err != nil:
		c.fail("oapi-codegen upsert-lead (bad): %v", err)
	case bad.JSON422 == nil:
		c.fail("oapi-codegen upsert-lead (bad): %d %s", bad.StatusCode(), bad.Body)
	default:
		c.same("oapi-codegen 422", bad.JSON422)
		c.expect("oapi-codegen 422 code", string(bad.JSON422.Error.Code), "E_PAYLOAD_INVALID")
	}
}

// ogen calls the same operations through the ogen client.
func (c *checks) ogen(ctx context.Context, gc *api.Client, w *world) {
	in := &api.LeadInput{Name: api.NewOptString("Grace Hopper"), EmailWork: api.NewOptString("grace@cobol.test"),
		Headline: api.NewOptString("Rear Admiral")}
	res, err := gc.UpsertLead(ctx, in, api.UpsertLeadParams{IdempotencyKey: api.NewOptString("live-ogen-1")})
	if err != nil {
		c.fail("ogen upsert-lead: %v", err)
	} else if ok, is := res.(*api.UpsertLeadOK); !is {
		c.fail("ogen upsert-lead: %T, want the 200 of an update", res)
	} else {
		c.same("ogen upsert-lead", &ok.Response)
		c.expect("ogen upsert-lead created", ok.Response.Created, false)
		d := ok.Response.Data.Value
		c.expect("ogen upsert-lead headline", d.Headline.Value, "Rear Admiral")
		c.expect("ogen upsert-lead company", d.Company.Value, "COBOL Ltd")
		c.expect("ogen upsert-lead X-Request-Id", ok.XRequestID != "", true)
		c.expect("ogen upsert-lead X-RateLimit-Remaining", ok.XRateLimitRemaining.Set, true)
	}
	// Sent again with the same key: the first answer, replayed.
	res, err = gc.UpsertLead(ctx, in, api.UpsertLeadParams{IdempotencyKey: api.NewOptString("live-ogen-1")})
	if err != nil {
		c.fail("ogen upsert-lead (replay): %v", err)
	} else if ok, is := res.(*api.UpsertLeadOK); !is {
		c.fail("ogen upsert-lead (replay): %T", res)
	} else {
		c.expect("ogen upsert-lead Idempotent-Replayed", string(ok.IdempotentReplayed.Value), "true")
	}

	id := uuid.MustParse(w.leadID)
	got, err := gc.GetLead(ctx, api.GetLeadParams{ID: id})
	if err != nil {
		c.fail("ogen get-lead: %v", err)
	} else if ok, is := got.(*api.LeadOutputBodyHeaders); !is {
		c.fail("ogen get-lead: %T", got)
	} else {
		c.same("ogen get-lead", &ok.Response)
		c.expect("ogen get-lead created_at", ok.Response.Data.Value.CreatedAt.Equal(c.sentCreatedAt()), true)
		c.expect("ogen get-lead id", ok.Response.Data.Value.ID, id)
		c.expect("ogen get-lead name", ok.Response.Data.Value.Name.Value, "Ada Lovelace")
		c.expect("ogen get-lead profile null", ok.Response.Data.Value.Profile.Null, true)
	}

	list, err := gc.ListLeads(ctx, api.ListLeadsParams{Email: api.NewOptString("ada@engines.test"), Limit: api.NewOptInt64(10)})
	if err != nil {
		c.fail("ogen list-leads: %v", err)
	} else if ok, is := list.(*api.PageLeadHeaders); !is {
		c.fail("ogen list-leads: %T", list)
	} else {
		c.same("ogen list-leads", &ok.Response)
		c.expect("ogen list-leads total", ok.Response.Total, int64(1))
		if len(ok.Response.Data) == 1 {
			c.expect("ogen list-leads company", ok.Response.Data[0].Company.Value, "Analytical Engines")
		}
	}

	threads, err := gc.ListThreads(ctx, api.ListThreadsParams{LeadID: api.NewOptUUID(id)})
	if err != nil {
		c.fail("ogen list-threads: %v", err)
	} else if ok, is := threads.(*api.PageThreadHeaders); !is {
		c.fail("ogen list-threads: %T", threads)
	} else {
		c.same("ogen list-threads", &ok.Response)
		c.expect("ogen list-threads total", ok.Response.Total, int64(1))
		if len(ok.Response.Data) == 1 {
			t := ok.Response.Data[0]
			c.expect("ogen list-threads thread", t.ID.String(), w.threadID)
			c.expect("ogen list-threads channel", string(t.Channel), "linkedin")
			c.expect("ogen list-threads unread", t.Unread, true)
		}
	}

	rep, err := gc.ReportOverview(ctx, api.ReportOverviewParams{})
	if err != nil {
		c.fail("ogen report-overview: %v", err)
	} else if ok, is := rep.(*api.DataOutputReportBodyHeaders); !is {
		c.fail("ogen report-overview: %T", rep)
	} else {
		c.same("ogen report-overview", &ok.Response)
		c.expect("ogen report-overview timezone", ok.Response.Data.Value.Timezone, "Europe/Berlin")
	}

	missing, err := gc.GetLead(ctx, api.GetLeadParams{ID: uuid.Must(uuid.NewV7())})
	if err != nil {
		c.fail("ogen get-lead (missing): %v", err)
	} else if nf, is := missing.(*api.GetLeadNotFound); !is {
		c.fail("ogen get-lead (missing): %T", missing)
	} else {
		c.same("ogen 404", &nf.Response)
		c.expect("ogen 404 code", string(nf.Response.Error.Code), "E_NOT_FOUND")
		c.expect("ogen 404 request id", nf.Response.Error.RequestID, nf.XRequestID)
	}

	bad, err := gc.UpsertLead(ctx, &api.LeadInput{EmailWork: api.NewOptString("not-an-email")}, api.UpsertLeadParams{})
	if err != nil {
		c.fail("ogen upsert-lead (bad): %v", err)
	} else if inv, is := bad.(*api.UpsertLeadUnprocessableEntity); !is {
		c.fail("ogen upsert-lead (bad): %T", bad)
	} else {
		c.same("ogen 422", &inv.Response)
		c.expect("ogen 422 code", string(inv.Response.Error.Code), "E_PAYLOAD_INVALID")
	}
}
