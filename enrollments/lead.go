package enrollments

import (
	"context"
	"time"

	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
)

// LeadEnrollments returns the lead's enrollments for the lead view,
// newest first.
func (svc *Service) LeadEnrollments(ctx context.Context, workspaceID, leadID string) ([]leads.EnrollmentRef, error) {
	es, err := svc.store.ForLead(ctx, workspaceID, leadID)
	if err != nil {
		return nil, err
	}
	out := make([]leads.EnrollmentRef, 0, len(es))
	names := map[string]string{}
	for _, e := range es {
		name, ok := names[e.SequenceID]
		if !ok {
			if q, err := svc.sequences.ByID(ctx, workspaceID, e.SequenceID); err == nil {
				name = q.Name
			}
			names[e.SequenceID] = name
		}
		out = append(out, leads.EnrollmentRef{ID: e.ID, SequenceID: e.SequenceID, SequenceName: name, SenderID: deref(e.SenderID),
			Status: string(e.Status), EnrolledAt: e.CreatedAt})
	}
	return out, nil
}

// LeadSenderState returns, per sender that invited or contacted the lead,
// the LinkedIn connection and the last contact.
func (svc *Service) LeadSenderState(ctx context.Context, workspaceID, leadID string) ([]leads.SenderState, error) {
	var rows []struct {
		SenderID string     `bun:"sender_id"`
		Last     *time.Time `bun:"last"`
	}
	idb := svc.db.IDB(ctx)
	if err := idb.NewSelect().Model((*ActionRecord)(nil)).Column("sender_id").ColumnExpr("max(done_at) AS last").
		Where("a.lead_id = ? AND a.status = 'sent'", leadID).Group("sender_id").Scan(ctx, &rows); err != nil {
		return nil, err
	}
	invs, err := svc.senders.LeadInvitations(ctx, leadID)
	if err != nil {
		return nil, err
	}
	out := []leads.SenderState{}
	for _, r := range rows {
		s, err := svc.senders.ByID(ctx, workspaceID, r.SenderID)
		if err != nil {
			return nil, err
		}
		st := leads.SenderState{SenderID: s.ID, SenderName: s.Name, ConnectionStatus: "none", LastContactAt: r.Last}
		for _, inv := range invs {
			if inv.SenderID != s.ID {
				continue
			}
			switch {
			case inv.AcceptedAt != nil:
				st.ConnectionStatus = "connected"
			case inv.WithdrawnAt != nil:
				st.ConnectionStatus = "withdrawn"
			default:
				st.ConnectionStatus = "pending"
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// LeadsStopped stops the live enrollments of leads that became
// do-not-contact, in the transaction ctx carries: future sends stop at once,
// and the enrollments say why.
func (svc *Service) LeadsStopped(ctx context.Context, workspaceID string, leadIDs []string, reason string) error {
	live, err := svc.store.Live(ctx, workspaceID, leadIDs)
	if err != nil {
		return err
	}
	now := db.Now(ctx, svc.clock)
	var evs []events.Event
	for i := range live {
		e := &live[i]
		e.Status, e.EndedAt, e.NextRunAt, e.WaitingFor, e.WaitingUntil, e.WaitingSenderID, e.WaitingAction = Stopped, &now, nil, nil, nil, nil, nil
		e.LastErrorCode, e.LeaseUntil, e.UpdatedAt = &reason, nil, now
		if err := svc.store.Save(ctx, e); err != nil {
			return err
		}
		evs = append(evs, events.Event{WorkspaceID: workspaceID, LeadID: e.LeadID, SequenceID: e.SequenceID, EnrollmentID: e.ID,
			SenderID: deref(e.SenderID), ClientID: deref(e.ClientID), StepID: e.StepID, Kind: EventStopped, Data: map[string]any{"sequence_id": e.SequenceID, "reason": reason}})
	}
	return svc.log.EmitMany(ctx, evs)
}
