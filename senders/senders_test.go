package senders_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
	"github.com/leadline/leadline/transports/unipile"
	"github.com/leadline/leadline/workspace"
)

var berlin, _ = time.LoadLocation("Europe/Berlin")

func TestParseSchedule(t *testing.T) {
	is := is.New(t)
	s, err := senders.ParseSchedule(map[string][]string{"mon-fri": {"13:00-17:30", "09:00-12:00"}, "sat": {"10:00-12:00"}})
	is.NoErr(err)
	is.Equal(s["wed"], []string{"09:00-12:00", "13:00-17:30"}) // sorted
	is.Equal(s["sat"], []string{"10:00-12:00"})
	is.Equal(len(s), 6) // no sunday

	s, err = senders.ParseSchedule(map[string][]string{"fri-mon": {"9:00-24:00"}, "wed": {"10:00-11:00"}})
	is.NoErr(err)
	is.Equal(len(s), 5) // fri, sat, sun, mon (wrapping) and wed
	is.Equal(s["sun"], []string{"09:00-24:00"})

	for spec, want := range map[string]map[string][]string{
		"overlap":         {"mon": {"09:00-12:00", "11:00-13:00"}},
		"crosses":         {"mon": {"22:00-02:00"}},
		"not a day":       {"monday": {"09:00-12:00"}},
		"bad time":        {"mon": {"9-12"}},
		"minutes":         {"mon": {"09:60-12:00"}},
		"twice":           {"mon-fri": {"09:00-12:00"}, "fri": {"13:00-14:00"}},
		"no window":       {"mon": {}},
		"after midnight":  {"mon": {"09:00-24:30"}},
		"empty window":    {"mon": {"09:00-09:00"}},
		"unknown in list": {"mon,xyz": {"09:00-10:00"}},
	} {
		_, err := senders.ParseSchedule(want)
		if err == nil {
			t.Errorf("%s: accepted %v", spec, want)
		}
	}
}

func TestScheduleAcrossDaylightSaving(t *testing.T) {
	is := is.New(t)
	s := senders.DefaultSchedule() // mon-fri 09:00-17:00
	// Saturday evening before the spring change (29 March 2026): Monday
	// 09:00 is CEST, UTC+2.
	next, ok := s.NextOpen(time.Date(2026, 3, 28, 17, 0, 0, 0, time.UTC), berlin)
	is.True(ok)
	is.Equal(next, time.Date(2026, 3, 30, 7, 0, 0, 0, time.UTC))
	// Friday after work before the autumn change (25 October): Monday 09:00
	// is CET, UTC+1.
	next, _ = s.NextOpen(time.Date(2026, 10, 23, 15, 30, 0, 0, time.UTC), berlin)
	is.Equal(next, time.Date(2026, 10, 26, 8, 0, 0, 0, time.UTC))
	// Inside a window, now is the answer.
	at := time.Date(2026, 10, 26, 10, 0, 0, 0, time.UTC)
	next, _ = s.NextOpen(at, berlin)
	is.Equal(next, at)
	is.True(s.Open(at, berlin))
	is.True(!s.Open(time.Date(2026, 10, 26, 16, 0, 0, 0, time.UTC), berlin)) // 17:00 CET: closed
	// Budgets reset at local midnight, also on the 25-hour day.
	is.Equal(senders.NextMidnight(time.Date(2026, 10, 25, 12, 0, 0, 0, time.UTC), berlin), time.Date(2026, 10, 25, 23, 0, 0, 0, time.UTC))
	is.Equal(senders.NextMidnight(time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC), berlin), time.Date(2026, 3, 29, 22, 0, 0, 0, time.UTC))
}

func TestWarmupRamp(t *testing.T) {
	is := is.New(t)
	w := senders.Warmup{Start: "2026-11-01", From: 5, Step: 5}
	is.Equal(w.Cap("2026-10-30"), 5) // before the start: the first day's cap
	is.Equal(w.Cap("2026-11-01"), 5)
	is.Equal(w.Cap("2026-11-02"), 10)
	is.Equal(w.Cap("2026-11-11"), 55)
}

type bundle struct {
	db      *db.DB
	clock   *apikit.FakeClock
	svc     *senders.Service
	ws      *workspace.Workspace
	clients map[string]string
	owner   senders.Owner
}

func setup(t *testing.T, d *db.DB, at time.Time) *bundle {
	t.Helper()
	clock := apikit.NewFakeClock(at)
	wsvc := workspace.NewService(d, clock)
	w, clients, _, err := wsvc.ApplyWorkspace(context.Background(), workspace.WorkspaceSpec{Name: "acme", Timezone: "Europe/Berlin",
		Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}}, Clients: []string{"Globex"}})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{db: d, clock: clock, svc: senders.NewService(d, clock, events.NewLog(d, clock)), ws: w, clients: clients,
		owner: senders.Owner{WorkspaceID: w.ID, Timezone: w.Timezone, Clients: clients}}
}

func (b *bundle) apply(t *testing.T, specs ...senders.Spec) *senders.Sender {
	t.Helper()
	if _, err := b.svc.Apply(context.Background(), b.owner, specs); err != nil {
		t.Fatal(err)
	}
	s, err := b.svc.ByName(context.Background(), b.ws.ID, specs[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// leads inserts n bare leads into the workspace.
func (b *bundle) leads(t *testing.T, n int) []leads.Lead {
	t.Helper()
	var ls []leads.Lead
	for range n {
		ls = append(ls, leads.Lead{ID: apikit.NewID(), WorkspaceID: b.ws.ID, Custom: map[string]any{}, CreatedAt: b.clock.Now(), UpdatedAt: b.clock.Now()})
	}
	if _, err := b.db.NewInsert().Model(&ls).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ls
}

func TestApplySenders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
		ctx := context.Background()
		anna := senders.Spec{Name: "anna", Channel: senders.LinkedIn, Client: "Globex", MonthlyCost: 79.999,
			Schedule: map[string][]string{"mon-fri": {"09:00-12:00", "13:00-17:30"}},
			Caps:     map[string]int{"invite": 25, "invite_week": 120}, Warmup: &senders.Warmup{Start: "2026-11-01", From: 5, Step: 5}}
		mail := senders.Spec{Name: "mail", Channel: senders.Email, Address: "Sales@Acme.test", Timezone: "America/New_York", Status: senders.Paused}
		changes, err := b.svc.Apply(ctx, b.owner, []senders.Spec{anna, mail})
		is.NoErr(err)
		is.Equal(changes, []string{"sender anna added (linkedin)", "sender mail added (email)"})

		s, err := b.svc.ByName(ctx, b.ws.ID, "anna")
		is.NoErr(err)
		is.Equal(*s.ClientID, b.clients["Globex"])
		is.Equal(s.Timezone, "Europe/Berlin") // the workspace's
		is.Equal(s.MonthlyCost, 80.0)
		is.Equal(s.Caps, senders.Caps{"invite": 25, "invite_week": 120, "profile_view": 50, "message": 50, "inmail": 20, "follow": 30, "like": 30})
		is.Equal(s.Health, senders.Healthy)
		m, err := b.svc.ByName(ctx, b.ws.ID, "mail")
		is.NoErr(err)
		is.Equal(*m.Address, "sales@acme.test")
		is.Equal(m.Caps, senders.Caps{"email": 30})
		is.Equal(m.Status, senders.Paused)
		is.Equal(m.Schedule, senders.DefaultSchedule())

		// Applying again changes nothing; a change is named.
		changes, err = b.svc.Apply(ctx, b.owner, []senders.Spec{anna, mail})
		is.NoErr(err)
		is.Equal(len(changes), 0)
		anna.Caps["invite"] = 30
		changes, err = b.svc.Apply(ctx, b.owner, []senders.Spec{anna})
		is.NoErr(err)
		is.Equal(changes, []string{"sender anna updated (caps)"})

		for name, bad := range map[string]senders.Spec{
			"above ceiling":     {Name: "x", Channel: senders.LinkedIn, Caps: map[string]int{"invite": 101}},
			"week above":        {Name: "x", Channel: senders.LinkedIn, Caps: map[string]int{"invite_week": 201}},
			"email cap on li":   {Name: "x", Channel: senders.LinkedIn, Caps: map[string]int{"email": 10}},
			"unknown action":    {Name: "x", Channel: senders.LinkedIn, Caps: map[string]int{"poke": 10}},
			"no address":        {Name: "x", Channel: senders.Email},
			"no channel":        {Name: "x"},
			"unknown client":    {Name: "x", Channel: senders.LinkedIn, Client: "Nobody"},
			"bad timezone":      {Name: "x", Channel: senders.LinkedIn, Timezone: "Mars/Olympus"},
			"server's timezone": {Name: "x", Channel: senders.LinkedIn, Timezone: "Local"},
			"other transport":   {Name: "x", Channel: senders.LinkedIn, Transport: "smtp"},
			"bad status":        {Name: "x", Channel: senders.LinkedIn, Status: "off"},
			"negative cost":     {Name: "x", Channel: senders.LinkedIn, MonthlyCost: -1},
			"bad schedule":      {Name: "x", Channel: senders.LinkedIn, Schedule: map[string][]string{"mon": {"18:00-09:00"}}},
			"bad warmup":        {Name: "x", Channel: senders.LinkedIn, Warmup: &senders.Warmup{Start: "Nov 1"}},
			"channel change":    {Name: "anna", Channel: senders.Email, Address: "a@b.test"},
			"premium for email": {Name: "x", Channel: senders.Email, Address: "a@b.test", Premium: true},
			"no name":           {Channel: senders.LinkedIn},
		} {
			_, err := b.svc.Apply(ctx, b.owner, []senders.Spec{bad})
			if apikit.ErrorCode(err) != apikit.EPayloadInvalid {
				t.Errorf("%s: got %v", name, err)
			}
		}
		_, err = b.svc.Apply(ctx, b.owner, []senders.Spec{{Name: "x", Channel: senders.LinkedIn, Caps: map[string]int{"invite": 101}}})
		is.True(strings.Contains(err.Error(), "ceiling of 100"))
		all, err := b.svc.All(ctx, b.ws.ID)
		is.NoErr(err)
		is.Equal(len(all), 2) // nothing of the refused specs was stored
	})
}

func TestReserveFollowsTheEffectiveCap(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		// Monday 2 November 2026, 10:00 in Berlin: local day 1 of the ramp.
		b := setup(t, d, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		ctx := context.Background()
		s := b.apply(t, senders.Spec{Name: "anna", Channel: senders.LinkedIn, Caps: map[string]int{"invite": 12, "invite_week": 30},
			Warmup: &senders.Warmup{Start: "2026-11-01", From: 5, Step: 5}})
		reserve := func(a senders.Action) *senders.Blocked {
			t.Helper()
			var blocked *senders.Blocked
			is.NoErr(d.InTx(ctx, func(ctx context.Context) error {
				var err error
				blocked, err = b.svc.Reserve(ctx, s, a, b.clock.Now())
				return err
			}))
			return blocked
		}
		for range 10 {
			is.Equal(reserve(senders.Invite), nil)
		}
		blocked := reserve(senders.Invite)
		is.Equal(blocked.Code, "warmup_limit") // day 1: 5 + 1·5 = 10
		is.Equal(blocked.Until, time.Date(2026, 11, 2, 23, 0, 0, 0, time.UTC))

		// The next local day the ramp allows 15; the configured 12 binds.
		b.clock.Set(time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC))
		for range 12 {
			is.Equal(reserve(senders.Invite), nil)
		}
		is.Equal(reserve(senders.Invite).Code, "daily_cap_reached")

		// Day 3: 22 of the 30 a week are used; 8 more, then the week is full
		// until the first day leaves the window (10 November).
		b.clock.Set(time.Date(2026, 11, 4, 8, 0, 0, 0, time.UTC))
		for range 8 {
			is.Equal(reserve(senders.Invite), nil)
		}
		blocked = reserve(senders.Invite)
		is.Equal(blocked.Code, "weekly_invite_cap_reached")
		is.Equal(blocked.Until, time.Date(2026, 11, 8, 23, 0, 0, 0, time.UTC)) // 9 Nov local midnight: 2 Nov leaves

		// Budgets show every limit.
		bud, err := b.svc.Budgets(ctx, apikit.Principal{WorkspaceID: b.ws.ID}, s.ID)
		is.NoErr(err)
		is.Equal(bud.Date, "2026-11-04")
		is.Equal(*bud.InviteWeek, senders.WeekBudget{Cap: 30, Used: 30, Remaining: 0})
		for _, a := range bud.Actions {
			if a.Action == senders.Invite {
				is.Equal(a.Cap, 12)
				is.Equal(a.Ceiling, 100)
				is.Equal(*a.WarmupCap, 20)
				is.Equal(a.HealthCap, nil)
				is.Equal(a.EffectiveCap, 12)
				is.Equal(a.Used, 8)
				is.Equal(a.Remaining, 4)
			}
		}
		is.Equal(len(bud.Actions), 6) // the LinkedIn actions

		// Health: a warning halves, a restriction stops.
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalLimit, "You are close to the weekly invitation limit."))
		is.Equal(s.Health, senders.Warning)
		is.Equal(s.Limits(senders.ProfileView, "2026-11-04").EffectiveCap, 10) // min(50, 150, ramp 20) / 2
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalRestricted, "Account restricted."))
		is.Equal(s.Health, senders.Restricted)
		is.Equal(reserve(senders.ProfileView).Code, "sender_restricted")
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalRecovered, ""))
		is.Equal(s.Health, senders.Healthy)
		// Each change of state is on the activity log.
		var kinds []string
		is.NoErr(d.NewSelect().Table("events").Column("kind").Where("sender_id = ?", s.ID).OrderExpr("created_at, id").Scan(ctx, &kinds))
		is.Equal(kinds, []string{senders.EventHealthChanged, senders.EventHealthChanged, senders.EventHealthChanged})
	})
}

func TestReserveUnderConcurrency(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		s := b.apply(t, senders.Spec{Name: "anna", Channel: senders.LinkedIn, Caps: map[string]int{"message": 7}})
		var wg sync.WaitGroup
		var mu sync.Mutex
		granted := 0
		for range 30 {
			wg.Go(func() {
				err := d.InTx(context.Background(), func(ctx context.Context) error {
					blocked, err := b.svc.Reserve(ctx, s, senders.Message, b.clock.Now())
					if err == nil && blocked == nil {
						mu.Lock()
						granted++
						mu.Unlock()
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		is.Equal(granted, 7)
	})
}

func TestHealthFromTheSendersNumbers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		ctx := context.Background()
		s := b.apply(t, senders.Spec{Name: "anna", Channel: senders.LinkedIn})
		ls := b.leads(t, 510)
		// 50 invitations on day 0, 5 accepted: 10%, below the guard's 15%.
		for i := range 50 {
			is.NoErr(b.svc.RecordInvite(ctx, s, ls[i].ID, false, "", ""))
		}
		b.clock.Advance(48 * time.Hour)
		for i := range 5 {
			ok, err := b.svc.InviteAccepted(ctx, s, ls[i].ID)
			is.NoErr(err)
			is.True(ok != nil) // the invitation was pending; its send time comes back
		}
		// Not yet settled: no judgement.
		is.NoErr(b.svc.Recheck(ctx, s))
		is.Equal(s.Health, senders.Healthy)
		b.clock.Advance(6 * 24 * time.Hour)
		is.NoErr(b.svc.Recheck(ctx, s))
		is.Equal(s.Health, senders.Warning)
		is.Equal(s.HealthReasons[0].Code, senders.GuardLowAcceptance)
		is.True(s.HealthReasons[0].Remedy != "")
		h, err := b.svc.Health(ctx, apikit.Principal{WorkspaceID: b.ws.ID}, s.ID)
		is.NoErr(err)
		is.Equal(*h.AcceptanceRate, 0.1)
		is.Equal(h.PendingInvitations, 45)

		// More than 500 pending is a warning of its own.
		for i := 50; i < 510; i++ {
			is.NoErr(b.svc.RecordInvite(ctx, s, ls[i].ID, false, "", ""))
		}
		is.NoErr(b.svc.Recheck(ctx, s))
		is.Equal(len(s.HealthReasons), 2)
		is.Equal(s.HealthReasons[0].Code, "too_many_pending") // the guards' reasons come after the numbers'

		// After 21 days the first 45 pending are stale: withdrawn (by the
		// runner's checks, through the transport), 460 pending left.
		b.clock.Advance(14 * 24 * time.Hour)
		stale, err := b.svc.StaleInvitations(ctx, []*senders.Sender{s}, b.clock.Now())
		is.NoErr(err)
		is.Equal(len(stale[s]), 45)
		for _, inv := range stale[s] {
			ok, err := b.svc.Withdrawn(ctx, s, inv)
			is.NoErr(err)
			is.True(ok)
		}
		is.NoErr(b.svc.Recheck(ctx, s))
		h, err = b.svc.Health(ctx, apikit.Principal{WorkspaceID: b.ws.ID}, s.ID)
		is.NoErr(err)
		is.Equal(h.PendingInvitations, 460)
		is.Equal(len(h.Reasons), 1) // low acceptance stays: the withdrawn count as not accepted
		n, err := d.NewSelect().Table("events").Where("kind = ?", senders.EventInviteWithdrawn).Count(ctx)
		is.NoErr(err)
		is.Equal(int(n), 45)
	})
}

// TestRecheckAllJudgesEachSender rechecks several senders together, as the
// runner's hourly checks do: each gets its own numbers, its own events and
// its check time, and a sender whose health did not change is not saved
// whole.
func TestRecheckAllJudgesEachSender(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		ctx := context.Background()
		anna := b.apply(t, senders.Spec{Name: "anna", Channel: senders.LinkedIn})
		ben := b.apply(t, senders.Spec{Name: "ben", Channel: senders.LinkedIn})
		mail := b.apply(t, senders.Spec{Name: "mail", Channel: senders.Email, Address: "mail@acme.test"})
		ls := b.leads(t, 60)
		// anna: 60 invitations, 6 accepted; ben: 60, all accepted.
		for i := range 60 {
			is.NoErr(b.svc.RecordInvite(ctx, anna, ls[i].ID, false, "", ""))
			is.NoErr(b.svc.RecordInvite(ctx, ben, ls[i].ID, false, "", ""))
		}
		b.clock.Advance(48 * time.Hour)
		for i := range 60 {
			if i < 6 {
				_, err := b.svc.InviteAccepted(ctx, anna, ls[i].ID)
				is.NoErr(err)
			}
			_, err := b.svc.InviteAccepted(ctx, ben, ls[i].ID)
			is.NoErr(err)
		}
		b.clock.Advance(6 * 24 * time.Hour)
		all := []*senders.Sender{anna, ben, mail}
		is.NoErr(b.svc.RecheckAll(ctx, all))
		is.Equal(anna.Health, senders.Warning)
		is.Equal(ben.Health, senders.Healthy)
		is.Equal(mail.Health, senders.Healthy)
		checked := func(when time.Time) {
			t.Helper()
			for _, s := range all {
				h, err := b.svc.Health(ctx, apikit.Principal{WorkspaceID: b.ws.ID}, s.ID)
				is.NoErr(err)
				is.True(h.CheckedAt != nil && h.CheckedAt.Equal(when)) // every sender's check time is written
				is.Equal(h.State, s.Health)
			}
		}
		checked(b.clock.Now())
		changes := func() int {
			n, err := d.NewSelect().Table("events").Where("kind = ?", senders.EventHealthChanged).Count(ctx)
			is.NoErr(err)
			return int(n)
		}
		is.Equal(changes(), 1) // anna's warning only

		// An hour later nothing changed: only the check times move.
		b.clock.Advance(time.Hour)
		is.NoErr(b.svc.RecheckAll(ctx, []*senders.Sender{anna, ben, mail}))
		checked(b.clock.Now())
		is.Equal(changes(), 1)

		// After 21 days anna's 54 pending invitations are stale, 50 of them
		// withdrawn today (withdraw_per_day); ben had none pending.
		b.clock.Advance(14 * 24 * time.Hour)
		stale, err := b.svc.StaleInvitations(ctx, all, b.clock.Now())
		is.NoErr(err)
		is.Equal(len(stale), 1)
		is.Equal(len(stale[anna]), 50)
	})
}

// TestTransportSettings: each transport kind's settings are checked by
// apply with the sender and field named; the sandbox takes none, and a
// kind this build does not have yet is refused after its settings check.
func TestTransportSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := setup(t, d, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
		ctx := context.Background()
		smtp := &email.Server{Host: "smtp.example.test", Port: 587, Security: "starttls", Username: "sales@acme.test", PasswordEnv: "ACME_MAIL_PASSWORD"}
		imap := &email.Server{Host: "imap.example.test", Port: 993, Security: "tls", Username: "sales@acme.test", PasswordEnv: "ACME_MAIL_PASSWORD", Inbox: "INBOX", Sent: "Sent"}
		mail := func(s, i *email.Server) senders.Spec {
			return senders.Spec{Name: "mail", Channel: senders.Email, Address: "sales@acme.test", Transport: "smtp", Sections: email.Sections(s, i)}
		}
		with := func(m *email.Server, f func(m *email.Server)) *email.Server {
			c := *m
			f(&c)
			return &c
		}
		for name, c := range map[string]struct {
			spec senders.Spec
			says string
		}{
			"no imap":            {mail(smtp, nil), "transport smtp needs smtp and imap settings"},
			"bad security":       {mail(with(smtp, func(m *email.Server) { m.Security = "ssl" }), imap), "smtp.security is tls, starttls or none"},
			"bad port":           {mail(with(smtp, func(m *email.Server) { m.Port = 0 }), imap), "smtp.port"},
			"secret in the file": {mail(with(smtp, func(m *email.Server) { m.PasswordEnv = "hunter2!" }), imap), "not an environment variable's name"},
			"no password env":    {mail(with(smtp, func(m *email.Server) { m.PasswordEnv = "" }), imap), "smtp.password_env is required"},
			"xoauth2 needs token": {mail(with(smtp, func(m *email.Server) { m.Auth, m.PasswordEnv = "xoauth2", "" }), imap),
				"smtp.token_env is required"},
			"oauth, no provider": {mail(with(smtp, func(m *email.Server) { m.Auth, m.PasswordEnv = "oauth", "" }), imap), "smtp.oauth.provider is google or microsoft"},
			"oauth, yahoo": {mail(with(smtp, func(m *email.Server) { m.Auth, m.PasswordEnv, m.OAuth = "oauth", "", &email.OAuth{Provider: "yahoo"} }), imap),
				"smtp.oauth.provider is google or microsoft"},
			"oauth and a password": {mail(with(smtp, func(m *email.Server) { m.Auth, m.OAuth = "oauth", &email.OAuth{Provider: "google"} }), imap),
				"auth oauth names no password_env"},
			"oauth without auth": {mail(with(smtp, func(m *email.Server) { m.OAuth = &email.OAuth{Provider: "google"} }), imap), "smtp.oauth goes with auth: oauth"},
			"folders on smtp":    {mail(with(smtp, func(m *email.Server) { m.Inbox = "INBOX" }), imap), "smtp takes no inbox"},
			"smtp on linkedin":   {senders.Spec{Name: "li", Channel: senders.LinkedIn, Transport: "smtp", Sections: email.Sections(smtp, imap)}, "for email senders"},
			"settings, sandbox":  {senders.Spec{Name: "li", Channel: senders.LinkedIn, Sections: map[string]any{"smtp": smtp}}, "transport sandbox takes no settings"},
			"unipile, no key": {senders.Spec{Name: "li", Channel: senders.LinkedIn, Transport: "unipile", Sections: (&unipile.Account{AccountID: "acc"}).Sections()},
				"unipile.api_key_env is required"},
			"unipile over http": {senders.Spec{Name: "li", Channel: senders.LinkedIn, Transport: "unipile",
				Sections: (&unipile.Account{AccountID: "acc", APIKeyEnv: "UNIPILE_API_KEY", BaseURL: "http://api.example.test"}).Sections()}, "must be an https URL"},
			"unknown transport": {senders.Spec{Name: "li", Channel: senders.LinkedIn, Transport: "fax"}, "not one of sandbox, smtp and unipile"},
			"name on imap":      {mail(smtp, with(imap, func(m *email.Server) { m.DisplayName = "Dana" })), "imap takes no display_name"},
			"dkim on imap":      {mail(smtp, with(imap, func(m *email.Server) { m.DKIMSelector = "google" })), "imap takes no dkim_selector"},
			"bad dkim selector": {mail(with(smtp, func(m *email.Server) { m.DKIMSelector = "google._domainkey " }), imap), "is not a DKIM selector"},
		} {
			_, err := b.svc.Apply(ctx, b.owner, []senders.Spec{c.spec})
			if apikit.ErrorCode(err) != apikit.EPayloadInvalid || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), `Sender "`) {
				t.Errorf("%s: got %v", name, err)
			}
		}
		is := is.New(t)
		// A whole mailbox applies; the secret it names is not set here,
		// which apply says.
		changes, err := b.svc.Apply(ctx, b.owner, []senders.Spec{mail(smtp, imap)})
		is.NoErr(err)
		is.Equal(len(changes), 2)
		is.True(strings.HasPrefix(changes[1], "warning: sender mail needs the environment variable ACME_MAIL_PASSWORD"))
		is.Equal(email.Settings(smtp, imap).SecretNames(email.Name), []string{"ACME_MAIL_PASSWORD"})
		t.Setenv("LEADLINE_TEST_SECRET", "s3cret")
		s := &senders.Sender{Name: "mail"}
		got, err := senders.EnvCredentials{}.Secret(ctx, s, "LEADLINE_TEST_SECRET")
		is.NoErr(err)
		is.Equal(got, "s3cret")
		_, err = senders.EnvCredentials{}.Secret(ctx, s, "LEADLINE_TEST_UNSET")
		is.True(errors.Is(err, senders.ErrCredentialsMissing))
	})
}

// TestDomainCheckWarning: a failing domain check is a warning that stays
// through the hourly rechecks and a transport's recovery, is not the
// transport's last error, and goes when the domain passes.
func TestDomainCheckWarning(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
		ctx := context.Background()
		s := b.apply(t, senders.Spec{Name: "mail", Channel: senders.Email, Address: "sales@acme.test"})
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalDomainCheckFailed, "The mail domain acme.test fails: DMARC."))
		is.Equal(s.Health, senders.Warning)
		is.True(s.LastError == nil)
		b.clock.Advance(25 * time.Hour)
		is.NoErr(b.svc.RecheckAll(ctx, []*senders.Sender{s}))
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalRecovered, ""))
		h, err := b.svc.Health(ctx, apikit.Principal{WorkspaceID: b.ws.ID}, s.ID)
		is.NoErr(err)
		is.Equal(h.State, senders.Warning)
		is.Equal(h.Reasons[0].Code, senders.SignalDomainCheckFailed)
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalDomainCheckPassed, ""))
		h, err = b.svc.Health(ctx, apikit.Principal{WorkspaceID: b.ws.ID}, s.ID)
		is.NoErr(err)
		is.Equal(h.State, senders.Healthy)
		is.Equal(len(h.Reasons), 0)
	})
}

// TestTransportKindActions: each kind declares what it can perform.
func TestTransportKindActions(t *testing.T) {
	is := is.New(t)
	uni, ok := senders.KindOf(unipile.Name)
	is.True(ok)
	is.True(uni.Can(senders.Invite) && uni.Can(senders.Message) && uni.Can(senders.InMail) && uni.Can(senders.ProfileView) && uni.Can(senders.Follow))
	is.True(!uni.Can(senders.Like))      // no documented post reaction in Unipile's v2
	is.True(!uni.Can(senders.SendEmail)) // LinkedIn only
	for _, a := range senders.Actions {
		sbx, _ := senders.KindOf(senders.TransportSandbox)
		is.True(sbx.Can(a))
	}
	mail, _ := senders.KindOf(email.Name)
	is.True(mail.Can(senders.SendEmail))
}

// TestProviderSignals: an account the provider disconnected is
// disconnected until it recovers; a provider's rate limit warns for an
// hour.
func TestProviderSignals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		b := setup(t, d, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
		ctx := context.Background()
		s := b.apply(t, senders.Spec{Name: "li", Channel: senders.LinkedIn})
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalAccountDisconnected, "LinkedIn ended the session."))
		is.Equal(s.Health, senders.Disconnected)
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalRecovered, ""))
		is.Equal(s.Health, senders.Healthy)
		is.NoErr(b.svc.Signal(ctx, s, senders.SignalProviderRateLimited, "Too many requests; retry in 60s."))
		is.Equal(s.Health, senders.Warning)
		b.clock.Advance(senders.ProviderRateLimitLapse + time.Minute)
		is.NoErr(b.svc.Recheck(ctx, s))
		is.Equal(s.Health, senders.Healthy)
	})
}
