package email

import (
	"context"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/mailtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/workspace"
)

// newSender stores an smtp sender whose mailbox is on imap, in a new
// workspace.
func newSender(t testing.TB, d *db.DB, clock apikit.Clock, address string, imap *Server) *senders.Sender {
	t.Helper()
	ctx := context.Background()
	w, _, _, err := workspace.NewService(d, clock).ApplyWorkspace(ctx, workspace.WorkspaceSpec{Name: "acme", Timezone: "UTC",
		Members: []workspace.MemberSpec{{Email: "o@acme.test", Role: apikit.RoleOwner}}})
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	s := &senders.Sender{ID: apikit.NewID(), WorkspaceID: w.ID, Name: "mailbox", Channel: senders.Email, Address: &address,
		Timezone: "UTC", Transport: Name, Status: senders.Active, Schedule: senders.DefaultSchedule(),
		Caps: senders.Caps{"email": 30}, Health: senders.Healthy, CreatedAt: now, UpdatedAt: now,
		Settings: Settings(&Server{Host: "127.0.0.1", Port: 587, Security: "none", Username: address, PasswordEnv: "UNUSED"}, imap)}
	if err := senders.NewBunStore(d).Save(ctx, s, true); err != nil {
		t.Fatal(err)
	}
	return s
}

var t0 = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

// boxIMAP is the settings a sender reads mailbox b with: no TLS (the
// server is on loopback), the password in the variable passwordEnv.
func boxIMAP(b mailtest.Box, passwordEnv string) *Server {
	return &Server{Host: b.Servers.IMAP.Host, Port: b.Servers.IMAP.Port, Security: "none", Username: b.Address,
		PasswordEnv: passwordEnv, Inbox: "INBOX", Sent: "Sent"}
}

// boxSMTP is the settings a sender sends from mailbox b with.
func boxSMTP(b mailtest.Box, passwordEnv string) *Server {
	return &Server{Host: b.Servers.SMTP.Host, Port: b.Servers.SMTP.Port, Security: "none", Username: b.Address, PasswordEnv: passwordEnv}
}

// BoxIMAP and BoxSMTP serve the package's external tests.
var BoxIMAP, BoxSMTP = boxIMAP, boxSMTP
