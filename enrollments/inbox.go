package enrollments

import (
	"context"
	"time"

	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/senders"
)

// Inbox is what the enrollments area needs of the inbox: the runner's
// messages land in their threads, and replies are taken in and read there.
type Inbox interface {
	RecordSent(ctx context.Context, o inbox.Outgoing) error
	Receive(ctx context.Context, a inbox.Arrived) (*inbox.Received, error)
	UseTransports(ts map[string]senders.Transport)
	Prefetch(ctx context.Context, workspaceID string, ss []*senders.Sender, leadIDs []string) error
}

// toThread puts a sent message, InMail or email into its thread, which
// belongs to the lead's client (client scope reads it there). A
// recovered action is rendered again from its step: templates are pure, so
// the text is the one that was sent.
func (r *Runner) toThread(ctx context.Context, e *Enrollment, c *call, res senders.Result, now time.Time) error {
	switch senders.Action(c.action.Action) {
	case senders.Message, senders.InMail, senders.SendEmail:
	default:
		return nil
	}
	subject, body, client := c.req.Subject, c.req.Body, c.leadClient
	if c.recover {
		ls, err := r.svc.leads.ByIDs(ctx, e.WorkspaceID, []string{e.LeadID})
		if err != nil || len(ls) == 0 {
			return err
		}
		texts, err := render(c.step, &ls[0])
		if err != nil {
			return nil
		}
		subject, body, client = texts["subject"], texts["body"], ls[0].ClientID
	}
	at := res.At
	if at.IsZero() {
		at = now
	}
	return r.svc.inbox.RecordSent(ctx, inbox.Outgoing{WorkspaceID: e.WorkspaceID, ClientID: client, Sender: c.sender, LeadID: e.LeadID,
		SequenceID: e.SequenceID, EnrollmentID: e.ID, Subject: subject, Body: body, ProviderMessageID: res.ProviderMessageID, At: at})
}
