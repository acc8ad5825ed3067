// Package enrollments holds enrollments (one lead in one sequence):
// preview and commit, pause, resume, exit and recover, and the runner that
// executes due steps through each sender's transport, inside its schedule
// and budget.
package enrollments

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// Status is an enrollment's state. active and paused are live; finished,
// exited, replied and stopped are terminal; failed can be recovered.
type Status string

// The statuses.
const (
	Active   Status = "active"
	Paused   Status = "paused"
	Finished Status = "finished"
	Exited   Status = "exited"
	Replied  Status = "replied"
	Stopped  Status = "stopped"
	Failed   Status = "failed"
)

// Live reports whether s holds the lead: a lead has at most one live
// enrollment in a workspace.
func (s Status) Live() bool { return s == Active || s == Paused }

// Activity-log kinds of enrollment changes, each on the lead's timeline.
const (
	EventCreated   = "enrollment.created"
	EventPaused    = "enrollment.paused"
	EventResumed   = "enrollment.resumed"
	EventExited    = "enrollment.exited"
	EventFinished  = "enrollment.finished"
	EventFailed    = "enrollment.failed"
	EventReplied   = "enrollment.replied"
	EventStopped   = "enrollment.stopped"
	EventRecovered = "enrollment.recovered"
)

// Enrollment is one lead in one sequence.
type Enrollment struct {
	bun.BaseModel `bun:"table:enrollments,alias:e"`

	ID            string     `bun:"id,pk" json:"id" format:"uuid"`
	WorkspaceID   string     `bun:"workspace_id" json:"-"`
	SequenceID    string     `bun:"sequence_id" json:"sequence_id" format:"uuid"`
	LeadID        string     `bun:"lead_id" json:"lead_id" format:"uuid"`
	ClientID      *string    `bun:"client_id" json:"client_id" format:"uuid"`
	SenderID      *string    `bun:"sender_id" json:"sender_id" format:"uuid" doc:"The sender of the LinkedIn steps, or of the email steps when the sequence has only those."`
	EmailSenderID *string    `bun:"email_sender_id" json:"email_sender_id" format:"uuid" doc:"The sender of the email steps when the sequence has LinkedIn steps too."`
	Status        Status     `bun:"status" json:"status" enum:"active,paused,finished,exited,replied,stopped,failed"`
	StepID        string     `bun:"step_id" json:"step_id" doc:"The current step (the failed one for a failed enrollment)."`
	StepStartedAt time.Time  `bun:"step_started_at" json:"step_started_at"`
	Attempt       int        `bun:"attempt" json:"-"`
	NextRunAt     *time.Time `bun:"next_run_at" json:"next_run_at" doc:"When the runner next looks at it; null while it waits for something other than time (a task, its sequence)."`
	Held          bool       `bun:"held" json:"-"`
	WaitingFor    *string    `bun:"waiting_for" json:"waiting_for" doc:"Why it is not running now, as a why-not-sending code; null when due."`
	WaitingUntil  *time.Time `bun:"waiting_until" json:"-"`
	// WaitingSenderID and WaitingAction name the sender's limit it waits on.
	WaitingSenderID *string    `bun:"waiting_sender_id" json:"-"`
	WaitingAction   *string    `bun:"waiting_action" json:"-"`
	LastErrorCode   *string    `bun:"last_error_code" json:"last_error_code"`
	LastError       *string    `bun:"last_error" json:"last_error"`
	FailedAt        *time.Time `bun:"failed_at" json:"failed_at"`
	EndedAt         *time.Time `bun:"ended_at" json:"ended_at"`
	ContactedAt     *time.Time `bun:"contacted_at" json:"contacted_at" doc:"When the enrollment first contacted its lead (invitation, message, InMail or email)."`
	RuleOf          *string    `bun:"rule_of" json:"rule_of" format:"uuid" doc:"The sequence whose rule (on_reply, on_meeting_booked) enrolled the lead; null for an enrolment by a member. The replies before such an enrolment do not stop it; a reply after it does."`
	LeaseUntil      *time.Time `bun:"lease_until" json:"-"`
	CreatedAt       time.Time  `bun:"created_at" json:"created_at"`
	UpdatedAt       time.Time  `bun:"updated_at" json:"updated_at"`

	// loaded is the row as read, so that a save writes only the columns
	// that changed: every index on a column left out is left alone.
	loaded *Enrollment `bun:"-" json:"-"`
}

// AfterReply reports whether the enrollment was made by a sequence's rule
// in answer to the lead (a reply or a booking): the lead's replies before
// it do not stop it, since the rule answers them. A reply after it ends it
// through reply-stop, as it ends every live enrollment.
func (e *Enrollment) AfterReply() bool { return e.RuleOf != nil }

// WaitSending marks an enrollment whose action is out with its
// transport: a run that finds it so after a lease asks the transport.
const WaitSending = "sending"

// Wait parks the enrollment for reason until until (nil: until something
// wakes it).
func (e *Enrollment) Wait(reason string, until *time.Time) {
	e.WaitingFor, e.NextRunAt, e.WaitingUntil, e.WaitingSenderID, e.WaitingAction = &reason, until, until, nil, nil
}

// WaitOn parks the enrollment on a limit of a sender for an action.
func (e *Enrollment) WaitOn(senderID string, a senders.Action, reason string, until *time.Time) {
	e.Wait(reason, until)
	action := string(a)
	e.WaitingSenderID, e.WaitingAction = &senderID, &action
}

// changes returns the columns of e that differ from the row as loaded,
// each with its value as an argument of a prepared statement on d; none
// when it was not loaded (save every column).
func (e *Enrollment) changes(d *db.DB) (cols []string, args []any) {
	o := e.loaded
	if o == nil {
		return nil, nil
	}
	add := func(col string, diff bool, v any) {
		if diff {
			cols, args = append(cols, col), append(args, v)
		}
	}
	str := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	add("sender_id", !eqPtr(o.SenderID, e.SenderID), str(e.SenderID))
	add("email_sender_id", !eqPtr(o.EmailSenderID, e.EmailSenderID), str(e.EmailSenderID))
	add("status", o.Status != e.Status, string(e.Status))
	add("step_id", o.StepID != e.StepID, e.StepID)
	add("step_started_at", !o.StepStartedAt.Equal(e.StepStartedAt), d.TimeArg(&e.StepStartedAt))
	add("attempt", o.Attempt != e.Attempt, e.Attempt)
	add("next_run_at", !eqTime(o.NextRunAt, e.NextRunAt), d.TimeArg(e.NextRunAt))
	add("held", o.Held != e.Held, e.Held)
	add("waiting_for", !eqPtr(o.WaitingFor, e.WaitingFor), str(e.WaitingFor))
	add("waiting_until", !eqTime(o.WaitingUntil, e.WaitingUntil), d.TimeArg(e.WaitingUntil))
	add("waiting_sender_id", !eqPtr(o.WaitingSenderID, e.WaitingSenderID), str(e.WaitingSenderID))
	add("waiting_action", !eqPtr(o.WaitingAction, e.WaitingAction), str(e.WaitingAction))
	add("last_error_code", !eqPtr(o.LastErrorCode, e.LastErrorCode), str(e.LastErrorCode))
	add("last_error", !eqPtr(o.LastError, e.LastError), str(e.LastError))
	add("failed_at", !eqTime(o.FailedAt, e.FailedAt), d.TimeArg(e.FailedAt))
	add("ended_at", !eqTime(o.EndedAt, e.EndedAt), d.TimeArg(e.EndedAt))
	add("contacted_at", !eqTime(o.ContactedAt, e.ContactedAt), d.TimeArg(e.ContactedAt))
	add("lease_until", !eqTime(o.LeaseUntil, e.LeaseUntil), d.TimeArg(e.LeaseUntil))
	add("updated_at", !o.UpdatedAt.Equal(e.UpdatedAt), d.TimeArg(&e.UpdatedAt))
	return cols, args
}

func eqPtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func eqTime(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }

// ActionRecord is one action the runner performed or is performing.
type ActionRecord struct {
	bun.BaseModel `bun:"table:actions,alias:a"`

	ID           string     `bun:"id,pk"`
	WorkspaceID  string     `bun:"workspace_id"`
	EnrollmentID string     `bun:"enrollment_id"`
	SequenceID   string     `bun:"sequence_id"`
	StepID       string     `bun:"step_id"`
	Attempt      int        `bun:"attempt"`
	SenderID     string     `bun:"sender_id"`
	LeadID       string     `bun:"lead_id"`
	Action       string     `bun:"action"`
	IdemKey      string     `bun:"idem_key"`
	Status       string     `bun:"status"` // sending, sent, failed
	WithNote     bool       `bun:"with_note"`
	Day          string     `bun:"day"` // the sender's local date the budget was taken on
	ErrorCode    *string    `bun:"error_code"`
	CreatedAt    time.Time  `bun:"created_at"`
	DoneAt       *time.Time `bun:"done_at"`
	// VariantID is the step's variant the action sent, for a step with
	// variants (sequences.Step.Choose).
	VariantID *string `bun:"variant_id"`
}

// stepStat counts enrollments per sequence step.
type stepStat struct {
	bun.BaseModel `bun:"table:step_stats"`

	SequenceID string `bun:"sequence_id,pk"`
	StepID     string `bun:"step_id,pk"`
	Entered    int    `bun:"entered"`
	Done       int    `bun:"done"`
	Failed     int    `bun:"failed"`
}
