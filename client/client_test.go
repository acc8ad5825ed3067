package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/client"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/internal/apitest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/server"
)

// fakeTime is the client's clock in tests: it reads the time as contexts'
// deadlines do, and sleeping advances the server's fake clock instead of
// waiting, and records the waits.
type fakeTime struct {
	env   *apitest.Env
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeTime) now() time.Time { return time.Now() }

func (f *fakeTime) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	f.env.Clock.Advance(d)
	return ctx.Err()
}

func newClient(env *apitest.Env, ft *fakeTime, opts ...client.Option) *client.Client {
	return client.New(env.URL, env.Key, append([]client.Option{client.WithClock(ft.now, ft.sleep)}, opts...)...)
}

// camel turns an operationId into its method's name: list-leads is
// ListLeads.
func camel(id string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// queryTags are the query names of a params struct, embedded ones
// included.
func queryTags(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			names = append(names, queryTags(f.Type)...)
		} else if q := f.Tag.Get("query"); q != "" {
			names = append(names, q)
		}
	}
	return names
}

// Every operation of the live document has a client method named after
// its operationId, which takes exactly its query parameters; every error
// code of the envelope has a sentinel.
func TestEveryOperationHasAMethod(t *testing.T) {
	is := is.New(t)
	env := apitest.Start(t, dbtest.Open(t, db.SQLite), server.RateLimits{})
	resp, err := http.Get(env.URL + "/v1/openapi.json")
	is.NoErr(err)
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	is.NoErr(json.NewDecoder(resp.Body).Decode(&doc))
	ct := reflect.TypeFor[*client.Client]()
	ops := 0
	for path, item := range doc.Paths {
		for method, op := range item {
			if op.OperationID == "" {
				continue
			}
			ops++
			name := camel(op.OperationID)
			m, ok := ct.MethodByName(name)
			if !ok {
				t.Errorf("%s %s (%s) has no client method %s", strings.ToUpper(method), path, op.OperationID, name)
				continue
			}
			var want, have []string
			for _, p := range op.Parameters {
				if p.In == "query" {
					want = append(want, p.Name)
				}
			}
			for i := range m.Type.NumIn() {
				if in := m.Type.In(i); in.Kind() == reflect.Struct {
					have = append(have, queryTags(in)...)
				}
			}
			sort.Strings(want)
			sort.Strings(have)
			if !slices.Equal(want, have) {
				t.Errorf("%s takes query %v; the document says %v", name, have, want)
			}
		}
	}
	is.True(ops > 60)
	enum := doc.Components.Schemas["ErrorDetail"].Properties["code"].Enum
	is.True(len(enum) >= 12)
	for _, code := range enum {
		e := &client.Error{Code: code}
		found := false
		for _, s := range []error{client.ErrUnauthorized, client.ErrPlanSuspended, client.ErrForbidden, client.ErrNotFound,
			client.ErrIdempotencyMismatch, client.ErrInProgress, client.ErrConflict, client.ErrPayloadInvalid, client.ErrTooMany,
			client.ErrGraphInvalid, client.ErrRateLimited, client.ErrInternal} {
			found = found || errors.Is(e, s)
		}
		if !found {
			t.Errorf("no sentinel error for %s", code)
		}
	}
}

func TestClientAgainstTheServer(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		env := apitest.Start(t, d, server.RateLimits{})
		c := newClient(env, &fakeTime{env: env})

		me, err := c.GetMe(ctx)
		is.NoErr(err)
		is.Equal(me.Workspace.Name, "acme")
		ids := map[string]string{}
		for _, n := range slices.Concat(me.Clients, me.Tags, me.Stages) {
			ids[n.Name] = n.ID
		}

		var leadIDs []string
		for i := range 5 {
			res, err := c.UpsertLead(ctx, leads.LeadInput{Name: new(fmt.Sprintf("Lead %d", i)), LinkedInID: new(fmt.Sprintf("lead-%d", i)),
				EmailWork: new(fmt.Sprintf("lead%d@example.test", i)), ClientID: new(ids["Globex"])})
			is.NoErr(err)
			is.True(res.Created)
			leadIDs = append(leadIDs, res.Data.ID)
		}
		again, err := c.UpsertLead(ctx, leads.LeadInput{LinkedInID: new("lead-0"), Company: new("Globex")})
		is.NoErr(err)
		is.True(!again.Created)
		is.Equal(again.Data.ID, leadIDs[0])

		d0, err := c.TagLead(ctx, leadIDs[0], ids["vip"])
		is.NoErr(err)
		is.Equal(len(d0.Tags), 1)
		d0, err = c.SetLeadStage(ctx, leadIDs[0], new(ids["New"]))
		is.NoErr(err)
		is.Equal(*d0.StageID, ids["New"])

		// One page, and every page.
		p, err := c.ListLeads(ctx, client.LeadsParams{PageParams: client.PageParams{Limit: 2}})
		is.NoErr(err)
		is.Equal(len(p.Data), 2)
		is.Equal(p.Total, 5)
		var all []string
		for l, err := range c.AllLeads(ctx, client.LeadsParams{PageParams: client.PageParams{Limit: 2}}) {
			is.NoErr(err)
			all = append(all, l.ID)
		}
		slices.Sort(all)
		want := slices.Clone(leadIDs)
		slices.Sort(want)
		is.Equal(all, want)
		tagged, err := c.ListLeads(ctx, client.LeadsParams{TagID: ids["vip"]})
		is.NoErr(err)
		is.Equal(tagged.Total, 1)

		seqs, err := c.ListSequences(ctx, client.SequencesParams{})
		is.NoErr(err)
		is.Equal(len(seqs.Data), 1)
		seq := seqs.Data[0].ID
		_, err = c.ActivateSequence(ctx, seq)
		is.NoErr(err)
		pv, err := c.PreviewEnrollments(ctx, enrollments.EnrollInput{SequenceID: seq, LeadIDs: leadIDs})
		is.NoErr(err)
		is.Equal(len(pv.EligibleIDs), 5)
		res, err := c.EnrolLeads(ctx, enrollments.EnrollInput{SequenceID: seq, LeadIDs: leadIDs, Confirm: true})
		is.NoErr(err)
		is.Equal(res.Enrolled, 5)
		n := 0
		for _, err := range c.AllEnrollments(ctx, client.EnrollmentsParams{SequenceID: seq, PageParams: client.PageParams{Limit: 3}}) {
			is.NoErr(err)
			n++
		}
		is.Equal(n, 5)

		_, err = c.ReportOverview(ctx, client.SeriesParams{Interval: "week"})
		is.NoErr(err)
		_, err = c.GetMetricDefinitions(ctx)
		is.NoErr(err)

		// Errors: typed, with the request id, never retried.
		_, err = c.GetLead(ctx, "0193a000-0000-7000-8000-000000000000")
		is.True(errors.Is(err, client.ErrNotFound))
		var ce *client.Error
		is.True(errors.As(err, &ce))
		is.Equal(ce.Status, 404)
		is.True(ce.RequestID != "")
		is.True(ce.Remedy != "")
		_, err = c.EnrolLeads(ctx, enrollments.EnrollInput{SequenceID: seq, LeadIDs: leadIDs}) // no confirm
		is.True(errors.Is(err, client.ErrPayloadInvalid))
		is.True(!errors.Is(err, client.ErrNotFound))
		_, err = client.New(env.URL, "wrong").GetMe(ctx)
		is.True(errors.Is(err, client.ErrUnauthorized))
	})
}

// A 429 waits for Retry-After and goes on; a wait past the context's
// deadline gives the 429 back at once.
func TestRateLimitedCallWaits(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		env := apitest.Start(t, d, server.RateLimits{Read: 2, Write: 2, Spend: 2})
		ft := &fakeTime{env: env}
		c := newClient(env, ft)
		ctx := context.Background()
		for range 2 {
			_, err := c.GetMe(ctx)
			is.NoErr(err)
		}
		// The window is full: a caller whose deadline comes first gets the
		// 429 without waiting.
		short, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err := c.GetMe(short)
		is.True(errors.Is(err, client.ErrRateLimited))
		var ce *client.Error
		is.True(errors.As(err, &ce))
		is.True(ce.RetryAfter > time.Minute)
		is.Equal(len(ft.waits), 0)

		me, err := c.GetMe(ctx)
		is.NoErr(err)
		is.Equal(me.Workspace.Name, "acme")
		is.Equal(len(ft.waits), 1)
		is.Equal(ft.waits[0], ce.RetryAfter) // the server's Retry-After
	})
}

// dropFirst is a transport that loses the first answer to a write after
// the server handled it, as a network failure would, and records the
// Idempotency-Key of every try.
type dropFirst struct {
	mu      sync.Mutex
	dropped bool
	keys    []string
}

func (d *dropFirst) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method == http.MethodGet {
		return resp, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keys = append(d.keys, req.Header.Get("Idempotency-Key"))
	if !d.dropped {
		d.dropped = true
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, nil
}

// A write whose answer was lost is retried with the same key and takes
// effect once.
func TestRetriedWriteTakesEffectOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		env := apitest.Start(t, d, server.RateLimits{})
		ft := &fakeTime{env: env}
		tr := &dropFirst{}
		c := newClient(env, ft, client.WithHTTPClient(&http.Client{Transport: tr}))
		ctx := context.Background()
		res, err := c.UpsertLead(ctx, leads.LeadInput{Name: new("Once"), EmailWork: new("once@example.test")})
		is.NoErr(err)
		is.True(res.Created) // the first answer, replayed
		is.Equal(len(tr.keys), 2)
		is.Equal(tr.keys[0], tr.keys[1])
		is.True(tr.keys[0] != "")
		is.Equal(len(ft.waits), 1) // one backoff
		p, err := c.ListLeads(ctx, client.LeadsParams{Email: "once@example.test"})
		is.NoErr(err)
		is.Equal(p.Total, 1)

		// A key the caller names is the one sent.
		tr.keys = nil
		_, err = c.UpsertLead(client.WithIdempotencyKey(ctx, "import-row-7"), leads.LeadInput{Name: new("Twice"), EmailWork: new("twice@example.test")})
		is.NoErr(err)
		is.Equal(tr.keys, []string{"import-row-7"})
	})
}

// failing answers the first n calls with status itself, then passes them
// on, and counts the tries.
type failing struct {
	status int
	n      int
	tries  int
	keys   []string
}

func (f *failing) RoundTrip(req *http.Request) (*http.Response, error) {
	f.tries++
	f.keys = append(f.keys, req.Header.Get("Idempotency-Key"))
	if f.tries <= f.n {
		body := `{"error":{"code":"E_INTERNAL","message":"down","remedy":"retry"}}`
		return &http.Response{StatusCode: f.status, Header: http.Header{"X-Request-Id": {"r1"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
	return http.DefaultTransport.RoundTrip(req)
}

func TestServerErrorsRetryAndClientErrorsDoNot(t *testing.T) {
	is := is.New(t)
	env := apitest.Start(t, dbtest.Open(t, db.SQLite), server.RateLimits{})
	ctx := context.Background()

	ft := &fakeTime{env: env}
	f := &failing{status: 503, n: 2}
	c := newClient(env, ft, client.WithHTTPClient(&http.Client{Transport: f}), client.WithBackoff(time.Second, 8*time.Second))
	_, err := c.UpsertLead(ctx, leads.LeadInput{Name: new("Flaky"), EmailWork: new("flaky@example.test")})
	is.NoErr(err)
	is.Equal(f.tries, 3)
	is.Equal(f.keys[0], f.keys[2])
	is.Equal(len(ft.waits), 2)
	is.True(ft.waits[0] >= 500*time.Millisecond && ft.waits[0] <= time.Second) // jittered
	is.True(ft.waits[1] >= time.Second && ft.waits[1] <= 2*time.Second)        // and doubling

	// Retries end: the last 5xx comes back, typed.
	f = &failing{status: 500, n: 100}
	c = newClient(env, ft, client.WithHTTPClient(&http.Client{Transport: f}), client.WithRetries(2))
	_, err = c.GetMe(ctx)
	is.True(errors.Is(err, client.ErrInternal))
	is.Equal(f.tries, 3)
	var ce *client.Error
	is.True(errors.As(err, &ce))
	is.Equal(ce.RequestID, "r1")

	// A 4xx is never retried.
	f = &failing{status: 404, n: 100}
	c = newClient(env, ft, client.WithHTTPClient(&http.Client{Transport: f}))
	_, err = c.GetMe(ctx)
	is.True(errors.Is(err, client.ErrInternal)) // the code the body names
	is.Equal(f.tries, 1)
}

// TestImportThroughTheClient uploads a CSV file and polls its job.
func TestImportThroughTheClient(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		env := apitest.Start(t, d, server.RateLimits{})
		c := newClient(env, &fakeTime{env: env})
		csv := "First Name;Last Name;Email;Company\nAnn;Lee;ann@example.test;Globex\nBo;Chen;not-an-email;Initech\n"
		job, err := c.ImportLeads(ctx, []byte(csv), client.ImportParams{Maps: []string{"Company=company"}})
		is.NoErr(err)
		// The server imports in the background: poll the job (work, not a
		// clock, is waited for).
		deadline := time.Now().Add(20 * time.Second)
		for job.Status == "running" && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			job, err = c.GetImport(ctx, job.ID, client.PageParams{})
			is.NoErr(err)
		}
		is.True(job.Status != "running")
		is.Equal(job.Created, 1)
		is.Equal(job.Rejected, 1)
		is.Equal(job.Errors[0].Line, 3)
		rejected, err := c.DownloadImportRejected(ctx, job.ID)
		is.NoErr(err)
		is.Equal(string(rejected), "line,code,reason\n3,E_PAYLOAD_INVALID,\"email_work \"\"not-an-email\"\" is not an email address.\"\n")
	})
}
