package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/oauthtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/oauth"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/workspace"
)

type bundle struct {
	svc    *oauth.Service
	clock  *apikit.FakeClock
	as     *oauthtest.Server
	ws     string
	sender *senders.Sender
	d      *db.DB
}

func setup(t *testing.T, d *db.DB) *bundle {
	t.Helper()
	ctx := context.Background()
	clock := apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	w, clients, _, err := workspace.NewService(d, clock).ApplyWorkspace(ctx, workspace.WorkspaceSpec{Name: "acme", Timezone: "UTC",
		Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}}})
	if err != nil {
		t.Fatal(err)
	}
	ssvc := senders.NewService(d, clock, events.NewLog(d, clock))
	m := &email.Server{Host: "127.0.0.1", Port: 1, Security: "none", Username: "box@acme.test", Auth: "oauth", OAuth: &email.OAuth{Provider: "google"}}
	if _, err := ssvc.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: "UTC", Clients: clients}, []senders.Spec{{Name: "box",
		Channel: senders.Email, Address: "box@acme.test", Transport: "smtp", Sections: email.Sections(m, m)}}); err != nil {
		t.Fatal(err)
	}
	s, err := ssvc.ByName(ctx, w.ID, "box")
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{svc: oauth.NewService(d, clock, secret.TestKey(), nil), clock: clock, as: oauthtest.Start(t, clock), ws: w.ID, sender: s, d: d}
}

// register registers the test server's client as the workspace's Google
// app, its secret typed in.
func (b *bundle) register(t *testing.T) {
	t.Helper()
	_, err := b.svc.SetApp(context.Background(), b.ws, oauth.AppInput{Provider: "google", ClientID: b.as.ClientID, Secret: b.as.ClientSecret,
		AuthURL: b.as.URL + "/authorize", TokenURL: b.as.URL + "/token"})
	if err != nil {
		t.Fatal(err)
	}
}

// follow follows an authorization URL as a browser would, to the
// redirect back: it returns the callback's query.
func follow(t *testing.T, authURL string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	u, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	return u.Query()
}

// TestApps: an app is registered with a secret typed in (sealed) or named
// as a variable; bad input is refused with a remedy and changes nothing.
func TestApps(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		for _, in := range []oauth.AppInput{
			{Provider: "yahoo", ClientID: "x", SecretEnv: "X"},
			{Provider: "google", ClientID: "", SecretEnv: "X"},
			{Provider: "google", ClientID: "a b", SecretEnv: "X"},
			{Provider: "google", ClientID: "id"},
			{Provider: "google", ClientID: "id", SecretEnv: "X", Secret: "y"},
			{Provider: "google", ClientID: "id", SecretEnv: "not a name"},
			{Provider: "google", ClientID: "id", SecretEnv: "X", TokenURL: "http://example.com/token"},
		} {
			_, err := b.svc.SetApp(ctx, b.ws, in)
			is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid) // refused
			is.True(apikit.AsError(err).Remedy != "")
		}
		apps, err := b.svc.Apps(ctx, b.ws)
		is.NoErr(err)
		is.Equal(len(apps), 0) // nothing changed

		_, err = b.svc.SetApp(ctx, b.ws, oauth.AppInput{Provider: "microsoft", ClientID: "ms-id", Secret: "ms-secret"})
		is.NoErr(err)
		_, err = b.svc.SetApp(ctx, b.ws, oauth.AppInput{Provider: "microsoft", ClientID: "ms-id-2"}) // keeps the secret
		is.NoErr(err)
		a, err := b.svc.App(ctx, b.ws, "microsoft")
		is.NoErr(err)
		is.Equal(a.ClientID, "ms-id-2")
		is.True(a.SecretStored())
		auth, _ := a.Endpoints()
		is.Equal(auth, oauth.Providers["microsoft"].AuthURL)
		var raw []string
		is.NoErr(d.NewSelect().Table("oauth_apps").Column("secret").Scan(ctx, &raw))
		is.True(secret.IsSealed([]byte(raw[0])) && !strings.Contains(raw[0], "ms-secret"))

		_, err = oauth.NewService(d, b.clock, secret.Key{}, nil).SetApp(ctx, b.ws, oauth.AppInput{Provider: "google", ClientID: "id", Secret: "s"})
		is.Equal(apikit.ErrorCode(err), apikit.EConflict) // no key: not stored
	})
}

// TestConnectAndRefresh: the code flow with PKCE connects the sender; the
// access token is reused until it nears its end, refreshed then (by the
// clock) and when the mail server refused it; a revoked grant makes the
// sender reconnect, and nothing asks the provider again until it does.
func TestConnectAndRefresh(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		_, _, err := b.svc.Begin(ctx, b.sender, "google", oauth.Bind("session"), "http://127.0.0.1/app/oauth/callback")
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound) // no app yet
		b.register(t)
		b.as.Approve("box@acme.test")

		_, err = b.svc.AccessToken(ctx, b.sender, "google", false)
		is.True(errors.Is(err, senders.ErrNotConnected))

		link, state, err := b.svc.Begin(ctx, b.sender, "google", oauth.Bind("session"), "http://127.0.0.1/app/oauth/callback")
		is.NoErr(err)
		u, _ := url.Parse(link)
		is.Equal(u.Query().Get("code_challenge_method"), "S256")
		is.Equal(u.Query().Get("scope"), "https://mail.google.com/")
		is.Equal(u.Query().Get("access_type"), "offline")
		is.Equal(u.Query().Get("login_hint"), "box@acme.test")
		back := follow(t, link)
		is.Equal(back.Get("state"), state)

		_, err = b.svc.Finish(ctx, state, oauth.Bind("another session"), back.Get("code"), "")
		is.Equal(apikit.ErrorCode(err), apikit.EForbidden) // bound to the session
		id, err := b.svc.Finish(ctx, state, oauth.Bind("session"), back.Get("code"), "")
		is.NoErr(err)
		is.Equal(id, b.sender.ID)
		_, err = b.svc.Finish(ctx, state, oauth.Bind("session"), back.Get("code"), "")
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound) // used once
		done, err := b.svc.Status(ctx, state)
		is.NoErr(err)
		is.True(done)

		// Nothing in the clear: the refresh token and the verifier.
		var rows []string
		is.NoErr(d.NewSelect().Table("oauth_tokens").Column("refresh_token").Scan(ctx, &rows))
		is.Equal(len(rows), 1)
		is.True(secret.IsSealed([]byte(rows[0])))
		var verifiers []string
		is.NoErr(d.NewSelect().Table("oauth_states").ColumnExpr("coalesce(verifier, '')").Scan(ctx, &verifiers))
		is.Equal(verifiers, []string{""}) // dropped once used

		t1, err := b.svc.AccessToken(ctx, b.sender, "google", false)
		is.NoErr(err)
		is.Equal(b.as.Refreshes(), 0) // the code's token
		b.clock.Advance(50 * time.Minute)
		t2, err := b.svc.AccessToken(ctx, b.sender, "google", false)
		is.NoErr(err)
		is.Equal(t1, t2)
		b.clock.Advance(6 * time.Minute) // 4 minutes left: refreshed
		t3, err := b.svc.AccessToken(ctx, b.sender, "google", false)
		is.NoErr(err)
		is.True(t3 != t2)
		is.Equal(b.as.Refreshes(), 1)
		t4, err := b.svc.AccessToken(ctx, b.sender, "google", true) // the server refused it
		is.NoErr(err)
		is.True(t4 != t3)
		is.Equal(b.as.Refreshes(), 2)

		b.as.RevokeAccount("box@acme.test")
		_, err = b.svc.AccessToken(ctx, b.sender, "google", true)
		is.True(errors.Is(err, senders.ErrReconnect))
		is.True(strings.Contains(err.Error(), "invalid_grant"))
		is.True(strings.Contains(err.Error(), "reconnect"))
		_, err = b.svc.AccessToken(ctx, b.sender, "google", false)
		is.True(errors.Is(err, senders.ErrReconnect))
		is.Equal(b.as.Refreshes(), 3) // the refused one; not asked again
		c, err := b.svc.Connection(ctx, b.sender.ID)
		is.NoErr(err)
		is.True(c.RefusedAt != nil)

		// Reconnecting clears the refusal.
		link, state, err = b.svc.Begin(ctx, b.sender, "google", oauth.BoundCLI, "http://127.0.0.1/app/oauth/callback")
		is.NoErr(err)
		back = follow(t, link)
		_, err = b.svc.Finish(ctx, state, "", back.Get("code"), "")
		is.NoErr(err)
		_, err = b.svc.AccessToken(ctx, b.sender, "google", false)
		is.NoErr(err)
	})
}

// TestConnectRefused: a consent refused, a code with the wrong verifier
// and an expired link end the connect with a message, and connect
// nothing.
func TestConnectRefused(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		b.register(t)
		b.as.Approve("")
		link, state, err := b.svc.Begin(ctx, b.sender, "google", oauth.BoundCLI, "http://127.0.0.1/cb")
		is.NoErr(err)
		back := follow(t, link)
		_, err = b.svc.Finish(ctx, state, "", back.Get("code"), back.Get("error"))
		is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
		is.True(strings.Contains(err.Error(), "access_denied"))
		_, err = b.svc.Status(ctx, state)
		is.True(err != nil && strings.Contains(err.Error(), "access_denied"))

		b.as.Approve("box@acme.test")
		_, state, err = b.svc.Begin(ctx, b.sender, "google", oauth.BoundCLI, "http://127.0.0.1/cb")
		is.NoErr(err)
		link2, _, err := b.svc.Begin(ctx, b.sender, "google", oauth.BoundCLI, "http://127.0.0.1/cb")
		is.NoErr(err)
		back = follow(t, link2) // another connect's code: its challenge is not this verifier's
		_, err = b.svc.Finish(ctx, state, "", back.Get("code"), "")
		is.Equal(apikit.ErrorCode(err), apikit.EConflict)
		is.True(strings.Contains(err.Error(), "invalid_grant"))

		_, state, err = b.svc.Begin(ctx, b.sender, "google", oauth.BoundCLI, "http://127.0.0.1/cb")
		is.NoErr(err)
		b.clock.Advance(oauth.StateTTL)
		_, err = b.svc.Finish(ctx, state, "", "code", "")
		is.Equal(apikit.ErrorCode(err), apikit.ENotFound)
		c, err := b.svc.Connection(ctx, b.sender.ID)
		is.NoErr(err)
		is.True(c == nil)
	})
}

// TestSweepStates: the sweep deletes the connects whose links expired,
// finished or not, and keeps a fresh one, which still connects; a
// callback for a swept state is told what a callback for an expired one
// is, and so is the command line that waits for it.
func TestSweepStates(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		b := setup(t, d)
		b.register(t)
		b.as.Approve("box@acme.test")
		count := func() int64 {
			n, err := d.NewSelect().Table("oauth_states").Count(ctx)
			is.NoErr(err)
			return n
		}
		_, old, err := b.svc.Begin(ctx, b.sender, "google", oauth.BoundCLI, "http://127.0.0.1/cb")
		is.NoErr(err)
		b.clock.Advance(10 * time.Minute)
		link, fresh, err := b.svc.Begin(ctx, b.sender, "google", oauth.BoundCLI, "http://127.0.0.1/cb")
		is.NoErr(err)
		back := follow(t, link)
		b.clock.Advance(oauth.StateTTL - 10*time.Minute) // old's link ends now, fresh's in 10 minutes

		is.NoErr(b.svc.SweepStates(ctx, b.clock.Now().Add(-time.Microsecond)))
		is.Equal(count(), int64(2)) // not yet expired: kept
		_, expired := b.svc.Finish(ctx, old, "", "code", "")
		is.Equal(apikit.ErrorCode(expired), apikit.ENotFound)
		is.True(strings.Contains(expired.Error(), "expired"))
		is.True(apikit.AsError(expired).Remedy != "")

		is.NoErr(b.svc.SweepStates(ctx, b.clock.Now()))
		is.Equal(count(), int64(1)) // old is gone
		_, swept := b.svc.Finish(ctx, old, "", "code", "")
		is.Equal(*apikit.AsError(swept), *apikit.AsError(expired)) // the same answer
		_, err = b.svc.Status(ctx, old)
		is.Equal(*apikit.AsError(err), *apikit.AsError(expired))

		id, err := b.svc.Finish(ctx, fresh, "", back.Get("code"), "") // fresh survived, and connects
		is.NoErr(err)
		is.Equal(id, b.sender.ID)
		b.clock.Advance(10 * time.Minute)
		is.NoErr(b.svc.SweepStates(ctx, b.clock.Now()))
		is.Equal(count(), int64(0)) // finished and expired: gone too
		c, err := b.svc.Connection(ctx, b.sender.ID)
		is.NoErr(err)
		is.True(c != nil) // the connection stays
	})
}

// TestProviderLabel names a connection's provider as people do, and keeps
// a name leadline does not know as it is.
func TestProviderLabel(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal((&oauth.Connection{Provider: oauth.Google}).ProviderLabel(), "Google")
	is.Equal((&oauth.Connection{Provider: oauth.Microsoft}).ProviderLabel(), "Microsoft")
	is.Equal((&oauth.Connection{Provider: "other"}).ProviderLabel(), "other")
}
