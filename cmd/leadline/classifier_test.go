package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/fixture"
	"github.com/leadline/leadline/platform"
)

func TestClassifierTrainAndEval(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	corpus := filepath.Join(dir, "replies.jsonl")
	var lines []string
	for i, r := range []struct{ intent, body string }{
		{"interested", "Yes, let's talk on Tuesday."}, {"not_interested", "No thanks, remove me."},
		{"question", "How much does it cost?"}, {"ooo", "I am out of the office until Monday."},
	} {
		for j := range 3 {
			lines = append(lines, `{"intent":"`+r.intent+`","lang":"en","channel":"email","body":"`+r.body+strings.Repeat(" ", i+j)+`"}`)
		}
	}
	is.NoErr(os.WriteFile(corpus, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	model := filepath.Join(dir, "m.llcm")
	out, err := runCmd("classifier", "train", "--from", corpus, "--out", model, "--epochs", "3")
	is.NoErr(err)
	is.True(strings.Contains(out, "trained on 12 replies"))
	data, err := os.ReadFile(model)
	is.NoErr(err)
	_, err = inbox.UnmarshalModel(data)
	is.NoErr(err)
	out, err = runCmd("classifier", "eval", "--on", corpus, "--model", model)
	is.NoErr(err)
	is.True(strings.Contains(out, "| all | 12 |"))

	_, err = runCmd("classifier", "train")
	is.True(err != nil) // --from or --from-workspace
	is.NoErr(os.WriteFile(corpus, []byte(`{"intent":"happy","body":"x"}`+"\n"), 0o644))
	_, err = runCmd("classifier", "train", "--from", corpus)
	is.True(err != nil) // an intent outside the seven
	_, err = runCmd("serve", "--classifier-url", "ftp://x")
	is.True(err != nil)
	_, err = runCmd("work", "--classifier-url", "http://127.0.0.1:1/v1/chat/completions", "--classifier-key-env", "LEADLINE_TEST_NO_SUCH_KEY")
	is.True(err != nil) // the key's variable is empty
}

// A workspace's model is trained on its hand-set intents, stored, and
// used only when it beats the built-in one on the held-out fifth.
func TestClassifierTrainFromWorkspace(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	// A workspace with 30 conversations: a lead each, and a message its
	// sender sent (what the demo's inbox holds, without its two weeks).
	d := dbtest.Open(t, db.SQLite)
	dbPath := d.Path
	w := fixture.New(t, d, fixture.Spec{Sender: true, Leads: 30})
	pl := platform.New(platform.Config{DB: d, Clock: apikit.NewFakeClock(fixture.At)})
	anna, err := pl.Senders.ByName(ctx, w.WorkspaceID, "anna")
	is.NoErr(err)
	for _, id := range w.LeadIDs {
		is.NoErr(pl.Inbox.RecordSent(ctx, inbox.Outgoing{WorkspaceID: w.WorkspaceID, Sender: anna, LeadID: id, Body: "Hi!", At: fixture.At}))
	}
	_, err = runCmd("classifier", "train", "--from-workspace", "contract", "--db", dbPath)
	is.True(err != nil) // no hand-set intents yet
	is.True(strings.Contains(err.Error(), "training needs at least 20"))

	// Members set the intent of 30 replies by hand.
	var ths []inbox.Thread
	is.NoErr(d.NewSelect().Model(&ths).Limit(30).Scan(ctx))
	if len(ths) < 25 {
		t.Fatalf("the workspace has %d threads", len(ths))
	}
	replies := []struct {
		intent inbox.Intent
		body   string
	}{{inbox.Interested, "Yes, let's talk on Tuesday."}, {inbox.NotInterested, "No thanks, remove me."},
		{inbox.Question, "How much does it cost?"}, {inbox.NotNow, "Not now, maybe next year."}}
	for i, th := range ths {
		r := replies[i%len(replies)]
		_, err := d.NewInsert().Model(&inbox.Message{ID: apikit.NewID(), WorkspaceID: th.WorkspaceID, ThreadID: th.ID, Direction: inbox.In, Status: inbox.Sent,
			Body: r.body, SentAt: th.LastMessageAt.Add(time.Hour), CreatedAt: th.LastMessageAt}).Exec(ctx)
		is.NoErr(err)
		_, err = d.NewUpdate().Table("threads").Set("intent = ?, intent_source = ?", r.intent, inbox.SourceManual).Where("id = ?", th.ID).Exec(ctx)
		is.NoErr(err)
	}
	out, err := runCmd("classifier", "train", "--from-workspace", "contract", "--db", dbPath)
	is.NoErr(err)
	is.True(strings.Contains(out, "hand-set intents of contract"))
	var rows []inbox.TeamModel
	is.NoErr(d.NewSelect().Model(&rows).Scan(ctx))
	is.Equal(len(rows), 1)
	is.True(rows[0].HeldOut > 0)
	is.Equal(rows[0].InUse, rows[0].Accuracy > rows[0].BuiltinAccuracy)
}
