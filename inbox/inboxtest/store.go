// Package inboxtest is the contract of inbox.Store: one suite that every
// store runs, on every engine it serves.
package inboxtest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// Fixture is what a fresh store comes with: a workspace, one of its
// LinkedIn senders and one of its leads.
type Fixture struct {
	WorkspaceID, SenderID, LeadID string
}

// Open returns a fresh store and its fixture.
type Open func(t *testing.T) (inbox.Store, Fixture)

// TestStore runs the contract of inbox.Store on the stores open makes,
// one fresh store per test.
func TestStore(t *testing.T, open Open) {
	t.Run("Conversation", func(t *testing.T) { conversation(t, open) })
	t.Run("Messages", func(t *testing.T) { messages(t, open) })
	t.Run("ListAndLatest", func(t *testing.T) { listAndLatest(t, open) })
}

var at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func thread(f Fixture) *inbox.Thread {
	return &inbox.Thread{ID: apikit.NewID(), WorkspaceID: f.WorkspaceID, SenderID: f.SenderID, LeadID: f.LeadID, Channel: senders.LinkedIn,
		LastMessageAt: at, CreatedAt: at, UpdatedAt: at}
}

func message(f Fixture, threadID, direction, providerID string, sentAt time.Time, autoReply bool) *inbox.Message {
	return &inbox.Message{ID: apikit.NewID(), WorkspaceID: f.WorkspaceID, ThreadID: threadID, Direction: direction, Status: "sent",
		Body: "Hello", AutoReply: autoReply, ProviderMessageID: &providerID, SentAt: sentAt, CreatedAt: sentAt}
}

// conversation: a sender, lead and channel have one thread, made the
// first time and found after, and read by id in its workspace only.
func conversation(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	first, err := st.Conversation(ctx, thread(f))
	is.NoErr(err)
	again, err := st.Conversation(ctx, thread(f))
	is.NoErr(err)
	is.Equal(again.ID, first.ID)
	got, err := st.ByID(ctx, f.WorkspaceID, first.ID, false)
	is.NoErr(err)
	is.Equal(got.LeadID, f.LeadID)
	_, err = st.ByID(ctx, apikit.NewID(), first.ID, false) // another workspace
	is.True(db.IsNoRows(err))
	got.Unread, got.MessageCount = true, 2
	is.NoErr(st.SaveThread(ctx, got))
	got, err = st.ByID(ctx, f.WorkspaceID, first.ID, false)
	is.NoErr(err)
	is.True(got.Unread)
	is.Equal(got.MessageCount, 2)
}

// messages: a provider message is kept once per direction; messages come
// oldest first; the last inbound is the latest a person wrote, before any
// auto-reply; a deleted message is gone.
func messages(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	th, err := st.Conversation(ctx, thread(f))
	is.NoErr(err)
	out := message(f, th.ID, inbox.Out, "p1", at, false)
	person := message(f, th.ID, inbox.In, "p2", at.Add(time.Hour), false)
	auto := message(f, th.ID, inbox.In, "p3", at.Add(2*time.Hour), true)
	for _, m := range []*inbox.Message{out, person, auto} {
		added, err := st.AddMessage(ctx, m)
		is.NoErr(err)
		is.True(added)
	}
	added, err := st.AddMessage(ctx, message(f, th.ID, inbox.In, "p2", at.Add(3*time.Hour), false))
	is.NoErr(err)
	is.True(!added) // the same provider message again
	all, err := st.Messages(ctx, th.ID)
	is.NoErr(err)
	is.Equal(len(all), 3)
	is.Equal(all[0].ID, out.ID)
	last, err := st.LastInbound(ctx, th.ID)
	is.NoErr(err)
	is.Equal(last.ID, person.ID)
	is.NoErr(st.DeleteMessage(ctx, person))
	last, err = st.LastInbound(ctx, th.ID)
	is.NoErr(err)
	is.Equal(last.ID, auto.ID)
}

// listAndLatest: the workspace's threads list with their total; the
// lead's latest conversation names its sender, and a lead with none an
// empty sender.
func listAndLatest(t *testing.T, open Open) {
	is := is.New(t)
	ctx := context.Background()
	st, f := open(t)
	th, err := st.Conversation(ctx, thread(f))
	is.NoErr(err)
	page, total, err := st.List(ctx, f.WorkspaceID, nil, inbox.Filter{Limit: 10})
	is.NoErr(err)
	is.Equal(total, 1)
	is.Equal(page[0].ID, th.ID)
	latest, err := st.LatestThread(ctx, f.LeadID, "")
	is.NoErr(err)
	is.Equal(latest.ID, th.ID)
	is.Equal(latest.SenderID, f.SenderID)
	latest, err = st.LatestThread(ctx, f.LeadID, apikit.NewID())
	is.NoErr(err)
	is.Equal(latest, nil)
	latest, err = st.LatestThread(ctx, apikit.NewID(), "")
	is.NoErr(err)
	is.Equal(latest, nil)
}
