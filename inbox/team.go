package inbox

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// TeamModel is a classifier trained on one workspace's hand-set intents,
// stored with how it and the built-in model read a held-out fifth of
// those replies. It reads the workspace's replies only when InUse: when it
// read that fifth better than the built-in model.
type TeamModel struct {
	bun.BaseModel `bun:"table:classifier_models,alias:cm"`

	WorkspaceID     string    `bun:"workspace_id,pk"`
	Model           []byte    `bun:"model"`
	Examples        int       `bun:"examples"`
	HeldOut         int       `bun:"held_out"`
	Accuracy        float64   `bun:"accuracy"`
	BuiltinAccuracy float64   `bun:"builtin_accuracy"`
	InUse           bool      `bun:"in_use"`
	TrainedAt       time.Time `bun:"trained_at"`
}

// MinTeamExamples is the fewest hand-set intents a workspace needs to
// train its own model.
const MinTeamExamples = 20

// TrainTeam trains a model on the intents the workspace's members set by
// hand (intent_source manual, each read on its thread's latest reply a
// person wrote), on top of the built-in model, from four fifths of them;
// it measures both models on the other fifth and stores the new one,
// used only when it reads that fifth better.
// Returns E_PAYLOAD_INVALID when the workspace has fewer than
// MinTeamExamples such replies.
func (svc *Service) TrainTeam(ctx context.Context, workspaceID string) (*TeamModel, error) {
	var rows []struct {
		ThreadID string `bun:"thread_id"`
		Intent   Intent `bun:"intent"`
		Subject  string `bun:"subject"`
		Body     string `bun:"body"`
	}
	err := svc.db.IDB(ctx).NewSelect().TableExpr("threads AS th").Join("JOIN messages AS m ON m.thread_id = th.id").
		ColumnExpr("th.id AS thread_id, th.intent, COALESCE(m.subject, '') AS subject, m.body").
		Where("th.workspace_id = ? AND th.intent_source = ? AND m.direction = ?", workspaceID, SourceManual, In).
		OrderExpr("th.id, m.auto_reply, m.sent_at DESC, m.id DESC").Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	var train, held []Example
	for i, r := range rows {
		if i > 0 && rows[i-1].ThreadID == r.ThreadID || !r.Intent.Valid() {
			continue // the thread's latest reply a person wrote only
		}
		ex := Example{Intent: r.Intent, Subject: r.Subject, Body: r.Body}
		h := fnv.New32a()
		h.Write([]byte(r.ThreadID))
		if h.Sum32()%5 == 0 {
			held = append(held, ex)
		} else {
			train = append(train, ex)
		}
	}
	if n := len(train) + len(held); n < MinTeamExamples || len(held) == 0 {
		return nil, apikit.Invalid(fmt.Sprintf("The workspace has %d replies whose intent a member set by hand; training needs at least %d.", n, MinTeamExamples),
			"Correct more intents with PUT /v1/threads/{id}/intent, then train again.")
	}
	m := Train(train, TrainOptions{From: Builtin(), Epochs: 6, Rate: 0.5, Seed: 25})
	data, err := m.MarshalBinary()
	if err != nil {
		return nil, err
	}
	tm := &TeamModel{WorkspaceID: workspaceID, Model: data, Examples: len(train), HeldOut: len(held),
		Accuracy:        Evaluate(held, readWithModel(m)).Accuracy(),
		BuiltinAccuracy: Evaluate(held, readWithModel(Builtin())).Accuracy(), TrainedAt: db.Now(ctx, svc.clock)}
	tm.InUse = tm.Accuracy > tm.BuiltinAccuracy
	_, err = svc.db.IDB(ctx).NewInsert().Model(tm).
		On("CONFLICT (workspace_id) DO UPDATE").
		Set("model = EXCLUDED.model, examples = EXCLUDED.examples, held_out = EXCLUDED.held_out, accuracy = EXCLUDED.accuracy").
		Set("builtin_accuracy = EXCLUDED.builtin_accuracy, in_use = EXCLUDED.in_use, trained_at = EXCLUDED.trained_at").Exec(ctx)
	if err != nil {
		return nil, err
	}
	svc.teams.forget(workspaceID)
	return tm, nil
}

func readWithModel(m *Model) func(Example) Intent {
	c := &ModelClassifier{Model: m, Threshold: DefaultThreshold}
	return func(ex Example) Intent {
		r, _ := c.Classify(context.Background(), Incoming{Subject: ex.Subject, Body: ex.Body, Headers: ex.Headers})
		return r.Intent
	}
}

// teamModelTTL is how long a process keeps a workspace's model (or its
// absence) before it reads the database again.
const teamModelTTL = time.Minute

// teamModels caches each workspace's classifier.
type teamModels struct {
	mu   sync.Mutex
	byWS map[string]teamEntry
}

type teamEntry struct {
	c  Classifier // nil: the workspace has no model in use
	at time.Time
}

func (t *teamModels) forget(workspaceID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byWS, workspaceID)
}

// classifierFor returns the classifier of a workspace: the one
// UseClassifier set, else the workspace's own model when it is in use,
// else the built-in one. A model that cannot be read is ignored.
func (svc *Service) classifierFor(ctx context.Context, workspaceID string) Classifier {
	if svc.custom || svc.db == nil {
		return svc.classifier
	}
	now := time.Now()
	svc.teams.mu.Lock()
	e, ok := svc.teams.byWS[workspaceID]
	svc.teams.mu.Unlock()
	if !ok || now.Sub(e.at) > teamModelTTL {
		e = teamEntry{at: now}
		tm := new(TeamModel)
		err := svc.db.IDB(ctx).NewSelect().Model(tm).Where("cm.workspace_id = ? AND cm.in_use = ?", workspaceID, true).Scan(ctx)
		if err == nil {
			if m, err := UnmarshalModel(tm.Model); err == nil {
				e.c = &ModelClassifier{Model: m, Threshold: DefaultThreshold}
			}
		} else if !db.IsNoRows(err) {
			return svc.classifier // read again next time
		}
		svc.teams.mu.Lock()
		if svc.teams.byWS == nil {
			svc.teams.byWS = map[string]teamEntry{}
		}
		svc.teams.byWS[workspaceID] = e
		svc.teams.mu.Unlock()
	}
	if e.c != nil {
		return e.c
	}
	return svc.classifier
}

// confidence is the classification's confidence to store, or nil when
// the classifier gives none.
func (c Classification) confidence() *float64 {
	if c.Confidence <= 0 {
		return nil
	}
	v := c.Confidence
	return &v
}
