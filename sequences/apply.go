package sequences

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Spec is a sequence as a setup file declares it: its steps, the senders
// (by name) it rotates between and its rules. A new sequence is a draft
// until it is activated.
type Spec struct {
	Name            string          `yaml:"name"`
	Client          string          `yaml:"client"`
	Senders         []string        `yaml:"senders"`
	Steps           []Step          `yaml:"steps"`
	OnReply         map[string]Rule `yaml:"on_reply"`
	OnMeetingBooked *Rule           `yaml:"on_meeting_booked"`
}

// Owner is the workspace a setup file's sequences belong to.
type Owner struct {
	WorkspaceID string
	// Clients maps the workspace's client names to their ids.
	Clients map[string]string
}

// Apply creates or updates the owner's sequences by name, inside the
// transaction ctx carries, and returns one line per change (with the
// problems of each graph, which block activation, not saving).
// Returns E_PAYLOAD_INVALID for an unknown client or sender, a sender of
// another client, a change to an active sequence's steps or senders, or a
// rule that names what the workspace does not have (rules.go). A
// sequence's rules may change while it runs.
func (svc *Service) Apply(ctx context.Context, o Owner, specs []Spec) ([]string, error) {
	var changes []string
	seen := map[string]bool{}
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, svc.clock)
		// The rules are checked once every sequence of the file is saved,
		// so that a rule may name one listed after it.
		var ruled []*Sequence
		for _, spec := range specs {
			name := strings.TrimSpace(spec.Name)
			bad := func(format string, args ...any) error {
				return apikit.Invalid(fmt.Sprintf("Sequence %q: ", name)+fmt.Sprintf(format, args...), "Fix the sequence in the setup file and apply it again.")
			}
			if name == "" {
				return apikit.Invalid("A sequence has no name.", "Give every sequence a name.")
			}
			// Subjects, titles, step ids and names are one line; a step's
			// note and body keep their line breaks.
			if err := apikit.CheckText("", spec); err != nil {
				return apikit.Prefixed(fmt.Sprintf("Sequence %q: ", name), err)
			}
			if seen[name] {
				return apikit.Invalid(fmt.Sprintf("Sequence %q is listed twice.", name), "List each sequence once.")
			}
			seen[name] = true
			q := &Sequence{Name: name, SenderIDs: []string{}, Steps: spec.Steps, OnReply: spec.OnReply, OnMeetingBooked: spec.OnMeetingBooked}
			if q.Steps == nil {
				q.Steps = []Step{}
			}
			if len(q.OnReply) == 0 {
				q.OnReply = nil
			}
			if spec.Client != "" {
				id, ok := o.Clients[spec.Client]
				if !ok {
					return bad("client %q is not a client of the workspace; add it under clients.", spec.Client)
				}
				q.ClientID = &id
			}
			for _, sn := range spec.Senders {
				s, err := svc.senders.ByName(ctx, o.WorkspaceID, sn)
				if db.IsNoRows(err) {
					return bad("sender %q is not a sender of the workspace; add it under senders.", sn)
				} else if err != nil {
					return err
				}
				if s.ClientID != nil && deref(s.ClientID) != deref(q.ClientID) {
					return bad("sender %q works for another client than the sequence.", sn)
				}
				if slices.Contains(q.SenderIDs, s.ID) {
					return bad("sender %q is listed twice.", sn)
				}
				q.SenderIDs = append(q.SenderIDs, s.ID)
			}
			old, err := svc.store.ByName(ctx, o.WorkspaceID, name)
			insert := db.IsNoRows(err)
			if err != nil && !insert {
				return err
			}
			var what string
			if insert {
				q.ID, q.WorkspaceID, q.Status, q.CreatedAt, q.UpdatedAt = apikit.NewID(), o.WorkspaceID, Draft, now, now
				what = "added (draft)"
			} else {
				fields := []string{}
				if deref(old.ClientID) != deref(q.ClientID) {
					fields = append(fields, "client")
				}
				if !slices.Equal(old.SenderIDs, q.SenderIDs) {
					fields = append(fields, "senders")
				}
				q.Steps = carryVariants(old.Steps, q.Steps, old.ActivatedAt != nil)
				if !sameSteps(old.Steps, q.Steps) {
					fields = append(fields, "steps")
				}
				rules := !sameRules(old, q)
				if len(fields) == 0 && !rules {
					continue
				}
				if old.Status == Active && len(fields) > 0 {
					return apikit.Invalid(fmt.Sprintf("Sequence %q is active; its %s cannot change while it runs.", name, strings.Join(fields, " and ")),
						"Pause it first (POST /v1/sequences/{id}/pause), apply the file, then activate it again. Enrollments keep their place by step id.")
				}
				q.ID, q.WorkspaceID, q.Status, q.ActivatedAt, q.PausedAt, q.CreatedAt, q.UpdatedAt =
					old.ID, old.WorkspaceID, old.Status, old.ActivatedAt, old.PausedAt, old.CreatedAt, now
				q.Winners = keptWinners(old.Winners, old.Steps, q.Steps)
				if rules {
					fields = append(fields, "rules")
				}
				what = "updated (" + strings.Join(fields, ", ") + ")"
			}
			if err := svc.store.Save(ctx, q, insert); err != nil {
				return err
			}
			if q.OnReply != nil || q.OnMeetingBooked != nil {
				ruled = append(ruled, q)
			}
			ps, err := svc.Problems(ctx, q)
			if err != nil {
				return err
			}
			line := fmt.Sprintf("sequence %s %s", name, what)
			if len(ps) > 0 {
				codes := make([]string, 0, len(ps))
				for _, p := range ps {
					codes = append(codes, p.Code+" "+p.StepID)
				}
				line += fmt.Sprintf("; %d problem(s) block activation: %s", len(ps), strings.Join(codes, ", "))
			}
			changes = append(changes, line)
		}
		for _, q := range ruled {
			if err := svc.checkRules(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	return changes, err
}

// sameSteps compares steps as they are stored.
func sameSteps(a, b []Step) bool { return sameJSON(a, b) }

// sameJSON compares two values as they are stored, as JSON.
func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
