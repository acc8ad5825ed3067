package console

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

var senderLink = regexp.MustCompile(`/app/senders/([0-9a-f-]{36})`)

// connect posts the connect form as b and returns the new sender's id.
func (e *env) connect(b *browser, form url.Values) string {
	e.t.Helper()
	r := b.post("/app/senders/new", "/app/senders", form)
	if r.code != http.StatusSeeOther {
		e.t.Fatalf("connect: %d %s", r.code, r.body)
	}
	m := senderLink.FindStringSubmatch(r.header.Get("Location"))
	if m == nil {
		e.t.Fatalf("connect went to %q", r.header.Get("Location"))
	}
	return m[1]
}

// logs captures what the console and the platform log, at every level.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (e *env) captureLogs() *logs {
	l := &logs{}
	logger := slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.pl.Logger, e.c.log = logger, logger
	return l
}

func TestConnectASenderWithinTheCeilings(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		boss := e.member("boss@acme.test", apikit.RoleManager)
		form := url.Values{"name": {"Anna LinkedIn"}, "channel": {"linkedin"}, "transport": {"sandbox"}, "status": {"active"},
			"timezone": {"Europe/Berlin"}, "schedule.mon": {"09:00-12:00, 13:00-17:00"}, "schedule.tue": {"09:00-17:00"},
			"cap.invite": {"25"}, "warmup_start": {"2026-11-02"}, "warmup_from": {"5"}, "warmup_step": {"2"}}
		id := e.connect(boss, form)
		s, err := e.pl.Senders.Visible(context.Background(), e.owner(), id)
		is.NoErr(err)
		is.Equal(s.Caps["invite"], 25)
		is.Equal(s.Schedule["mon"], []string{"09:00-12:00", "13:00-17:00"})
		is.Equal(s.Warmup.From, 5)

		// The list and the page show health, today's budgets and capacity.
		list := boss.get("/app/senders")
		is.Equal(list.code, http.StatusOK)
		is.True(strings.Contains(list.body, "Anna LinkedIn"))
		is.True(strings.Contains(list.body, "healthy"))
		is.True(strings.Contains(list.body, "invite 0 / 5")) // the warm-up's first day
		page := boss.get("/app/senders/" + id)
		is.True(strings.Contains(page.body, "Capacity, next 7 days"))
		is.True(strings.Contains(page.body, `value="25"`))

		// A cap above the ceiling: the setup file's error, the form as typed.
		form.Set("cap.invite", "500")
		r := boss.post("/app/senders/"+id, "/app/senders/"+id, form)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		_, want := e.pl.Senders.Apply(context.Background(), senders.Owner{WorkspaceID: s.WorkspaceID, Timezone: s.Timezone},
			[]senders.Spec{{Name: "Anna LinkedIn", Channel: senders.LinkedIn, Caps: map[string]int{"invite": 500}}})
		is.True(strings.Contains(want.Error(), "above the platform ceiling of 100"))
		is.True(strings.Contains(r.body, escaped(apikit.AsError(want).Message)))
		is.True(strings.Contains(r.body, `value="500"`))
		s, _ = e.pl.Senders.Visible(context.Background(), e.owner(), id)
		is.Equal(s.Caps["invite"], 25) // unchanged
		// Within: saved; paused.
		form.Set("cap.invite", "40")
		form.Set("status", "paused")
		is.Equal(boss.post("/app/senders/"+id, "/app/senders/"+id, form).code, http.StatusSeeOther)
		s, _ = e.pl.Senders.Visible(context.Background(), e.owner(), id)
		is.Equal(s.Caps["invite"], 40)
		is.Equal(s.Status, senders.Paused)
		// A name taken, and the sandbox's check.
		r = boss.post("/app/senders/new", "/app/senders", form)
		is.Equal(r.code, http.StatusConflict)
		r = boss.post("/app/senders/"+id, "/app/senders/"+id+"/check", nil)
		is.Equal(r.code, http.StatusOK)
		is.True(strings.Contains(r.body, "The sandbox transport needs no connection."))
	})
}

func TestATypedSecretIsNeverShownAgain(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		logs := e.captureLogs()
		const pw = "pa55-typed-in-the-console"
		boss := e.member("boss@acme.test", apikit.RoleManager)
		// Port 1 on loopback: nothing listens, the check fails at once.
		form := url.Values{"name": {"Mailbox"}, "channel": {"email"}, "address": {"box@acme.test"}, "transport": {"smtp"}, "status": {"active"},
			"schedule.mon": {"09:00-17:00"},
			"smtp.host":    {"127.0.0.1"}, "smtp.port": {"1"}, "smtp.security": {"none"}, "smtp.username": {"box"}, "smtp.auth": {"password"}, "smtp.secret": {pw},
			"imap.host": {"127.0.0.1"}, "imap.port": {"1"}, "imap.security": {"none"}, "imap.username": {"box"}, "imap.auth": {"password"}, "imap.secret_env": {"LEADLINE_TEST_UNSET_IMAP_PW"}}
		// Refused (a cap above the ceiling): the secret is not in the form again.
		form.Set("cap.email", "1000")
		r := boss.post("/app/senders/new?channel=email", "/app/senders", form)
		is.Equal(r.code, http.StatusUnprocessableEntity)
		is.True(strings.Contains(r.body, "above the platform ceiling"))
		is.True(!strings.Contains(r.body, pw))
		form.Del("cap.email")
		id := e.connect(boss, form)
		s, err := e.pl.Senders.Visible(context.Background(), e.owner(), id)
		is.NoErr(err)
		name := "LEADLINE_SENDER_MAILBOX_SMTP_SECRET"
		smtp, err := senders.Section[email.Server](s.Settings, "smtp")
		is.NoErr(err)
		is.Equal(smtp.PasswordEnv, name)
		got, err := e.pl.SenderSecrets.Secret(context.Background(), s, name)
		is.NoErr(err)
		is.Equal(got, pw) // the transports read it

		page := boss.get("/app/senders/" + id)
		is.True(strings.Contains(page.body, "<code>"+name+"</code>: stored sealed"))
		is.True(strings.Contains(page.body, "LEADLINE_TEST_UNSET_IMAP_PW</code>: missing"))
		check := boss.post("/app/senders/"+id, "/app/senders/"+id+"/check", nil)
		is.Equal(check.code, http.StatusOK)
		is.True(strings.Contains(check.body, "✗"))
		// Saving again without typing it keeps it.
		form.Del("smtp.secret")
		form.Set("smtp.secret_env", name)
		is.Equal(boss.post("/app/senders/"+id, "/app/senders/"+id, form).code, http.StatusSeeOther)
		got, _ = e.pl.SenderSecrets.Secret(context.Background(), s, name)
		is.Equal(got, pw)

		// Nowhere afterwards: pages, the API's views, the database, the logs.
		for _, p := range []string{"/app/senders", "/app/senders/" + id} {
			is.True(!strings.Contains(boss.get(p).body, pw))
		}
		is.True(!strings.Contains(check.body, pw))
		v, _ := e.pl.Senders.Visible(context.Background(), e.owner(), id)
		list, _ := e.pl.Senders.List(context.Background(), e.owner(), senders.Filter{Limit: 50})
		h, _ := e.pl.Senders.Health(context.Background(), e.owner(), id)
		api, _ := json.Marshal([]any{v, list, h})
		is.True(!strings.Contains(string(api), pw))
		var raw []string
		is.NoErr(d.NewSelect().Table("sender_secrets").Column("secret").Scan(context.Background(), &raw))
		is.True(len(raw) == 1 && !strings.Contains(raw[0], pw))
		is.True(!strings.Contains(logs.String(), pw))
	})
}

// TestSenderPageChecksTheDomain: an email sender's page shows its
// domain's MX, SPF, DKIM and DMARC with what to fix, from a DNS server of
// the test's own; a failure is a health warning, reused for the hour,
// and "Check connection" checks again.
func TestSenderPageChecksTheDomain(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.dns.Add(t, "acme.test. 300 IN MX 10 mx.acme.test.", "mx.acme.test. 300 IN A 192.0.2.25")
		e.dns.TXT("acme.test", "v=spf1 ip4:192.0.2.0/24 -all")
		boss := e.member("boss@acme.test", apikit.RoleManager)
		form := url.Values{"name": {"Mailbox"}, "channel": {"email"}, "address": {"box@acme.test"}, "transport": {"smtp"}, "status": {"active"},
			"schedule.mon": {"09:00-17:00"},
			"smtp.host":    {"127.0.0.1"}, "smtp.port": {"1"}, "smtp.security": {"none"}, "smtp.username": {"box"}, "smtp.auth": {"password"},
			"smtp.secret_env": {"LEADLINE_TEST_UNSET_PW"}, "smtp.dkim_selector": {"mail"},
			"imap.host": {"127.0.0.1"}, "imap.port": {"1"}, "imap.security": {"none"}, "imap.username": {"box"}, "imap.auth": {"password"}, "imap.secret_env": {"LEADLINE_TEST_UNSET_PW"}}
		id := e.connect(boss, form)

		page := boss.get("/app/senders/" + id)
		is.Equal(page.code, http.StatusOK)
		is.True(strings.Contains(page.body, "Domain acme.test"))
		is.True(strings.Contains(page.body, "<td>MX</td><td><span class=\"badge\">✓ pass</span></td><td>mx.acme.test (10)</td>"))
		is.True(strings.Contains(page.body, "<td>DMARC</td><td><span class=\"badge bad\">✗ fail</span></td><td>no DMARC record at _dmarc.acme.test</td>"))
		is.True(strings.Contains(page.body, "no DKIM key at mail._domainkey.acme.test"))
		is.True(strings.Contains(page.body, `value="mail"`)) // the selector in the form
		is.True(strings.Contains(page.body, "(domain_check_failed)"))
		h, err := e.pl.Senders.Health(context.Background(), e.owner(), id)
		is.NoErr(err)
		is.Equal(h.State, senders.Warning)

		// Within the hour the page reuses the report; the button checks again.
		e.dns.TXT("_dmarc.acme.test", "v=DMARC1; p=quarantine")
		e.dns.TXT("mail._domainkey.acme.test", "v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
		queries := e.dns.Queries()
		is.True(strings.Contains(boss.get("/app/senders/"+id).body, "(domain_check_failed)"))
		is.Equal(e.dns.Queries(), queries)
		check := boss.post("/app/senders/"+id, "/app/senders/"+id+"/check", nil)
		is.Equal(check.code, http.StatusOK)
		is.True(strings.Contains(check.body, "p=quarantine, alignment DKIM relaxed (adkim) and SPF relaxed (aspf)"))
		is.True(strings.Contains(check.body, "mail: Ed25519 key (RFC 8463)"))
		is.True(!strings.Contains(check.body, "(domain_check_failed)"))
		h, err = e.pl.Senders.Health(context.Background(), e.owner(), id)
		is.NoErr(err)
		is.Equal(h.State, senders.Healthy)
	})
}

func TestSendersRefuseViewersAndOtherWorkspaces(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		e := newEnv(t, d)
		e.sandboxSenders()
		s, err := e.pl.Senders.ByName(context.Background(), e.owner().WorkspaceID, "li")
		is.NoErr(err)
		sdr := e.member("sdr@acme.test", apikit.RoleMember)
		viewer := e.member("viewer@acme.test", apikit.RoleClientViewer, "Globex")
		stranger := e.member("other:owner@other.test", apikit.RoleOwner)
		boss := e.member("boss@acme.test", apikit.RoleManager)

		page := sdr.get("/app/senders/" + s.ID)
		is.Equal(page.code, http.StatusOK)
		is.True(!strings.Contains(page.body, `id="sender-form"`))
		is.True(!strings.Contains(page.body, `id="check"`))
		is.True(!strings.Contains(sdr.get("/app/senders").body, `id="connect"`))
		is.Equal(sdr.get("/app/senders/new").code, http.StatusForbidden)
		is.Equal(sdr.post("/app/senders", "/app/senders/"+s.ID, url.Values{"cap.invite": {"1"}}).code, http.StatusForbidden)
		is.Equal(sdr.post("/app/senders", "/app/senders/"+s.ID+"/check", nil).code, http.StatusForbidden)
		// The Globex viewer does not see a workspace sender.
		is.Equal(viewer.get("/app/senders/"+s.ID).code, http.StatusNotFound)
		is.True(!strings.Contains(viewer.get("/app/senders").body, ">li<"))
		is.Equal(viewer.post("/app/senders", "/app/senders", url.Values{"name": {"x"}}).code, http.StatusForbidden)
		// Another workspace: 404.
		is.Equal(stranger.get("/app/senders/"+s.ID).code, http.StatusNotFound)
		is.Equal(stranger.post("/app/senders", "/app/senders/"+s.ID, url.Values{}).code, http.StatusNotFound)
		// No CSRF token.
		is.Equal(boss.postForm("/app/senders/"+s.ID+"/check", nil, "").code, http.StatusForbidden)
	})
}
