// Package webhooks delivers the activity log to the HTTPS endpoints a
// workspace subscribes: subscriptions, the outbox that fans events out in
// their own transaction, signed deliveries with retries, switching a
// failing endpoint off, the delivery log, replays, an SSRF-safe client and
// Verify for receivers.
package webhooks

import (
	"slices"

	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/senders"
)

// Kind is an event type a webhook can subscribe to.
type Kind struct {
	Type        string `json:"type"`
	Description string `json:"description"`
}

// Kinds are every event type delivered, in a stable order.
var Kinds = []Kind{
	{"message.classified", "A reply was read and given an intent (or a member changed its intent); the event to use for a new interested reply. data: thread_id, message_id, lead_id, sender_id, sequence_id, intent, intent_source, auto_reply."},
	{"sequence.stalled", "An active sequence has had work it could not send for 24 hours (a paused, restricted or disconnected sender, the note quota, a suspended workspace)."},
	{"sender.running_dry", "A sender's caps hold back due work today."},
	{"sequence.recovered", "A stalled sequence sends again."},
	{"meeting.booked", "A lead booked a meeting. data: lead_id, sender_id, provider, starts_at, booking_id."},
	{"sequence.webhook", "A sequence's Call-webhook step ran. data: sequence_id, enrollment_id, lead_id, step_id, payload."},
	{"lead.created", "A lead was created."},
	{"lead.updated", "A lead's fields changed."},
	{"lead.suppressed", "A lead became do-not-contact; its enrollments stopped."},
	{"lead.unsuppressed", "A lead's do-not-contact was cleared."},
	{"lead.tagged", "A tag was added to a lead."},
	{"lead.untagged", "A tag was removed from a lead."},
	{"lead.stage_changed", "A lead moved to another stage."},
	{"lead.list_changed", "A lead moved to another list."},
	{"enrollment.created", "A lead was enrolled in a sequence."},
	{"enrollment.paused", "An enrollment was paused."},
	{"enrollment.resumed", "An enrollment was resumed."},
	{"enrollment.finished", "An enrollment went through its last step."},
	{"enrollment.exited", "An enrollment was exited."},
	{"enrollment.failed", "An enrollment failed at a step. data: code, message."},
	{"enrollment.recovered", "A failed enrollment runs its failed step again."},
	{"enrollment.replied", "An enrollment stopped because the lead replied."},
	{"enrollment.stopped", "An enrollment stopped: the lead became do-not-contact or blacklisted."},
	{"invite.sent", "A LinkedIn invitation was sent. data: with_note."},
	{"invite.accepted", "A LinkedIn invitation was accepted."},
	{"message.sent", "A LinkedIn message, InMail or email was sent, by a sequence or a member's reply. data: action, purpose."},
	{"action.sent", "Another capped action was performed: a profile view, a follow or a like. data: action, purpose."},
	{"reply.received", "A reply or an auto-reply came in. data: thread_id, message_id, intent, auto_reply."},
	{"email.bounced", "An email bounced; the enrollment failed."},
	{"task.created", "A sequence's task step opened a task. data: task_id, title, due_at, assignee_id."},
	{"task.completed", "A member completed a task. data: task_id, outcome, note."},
	{"task.assigned", "A task was assigned to a member, or unassigned. data: task_id, assignee_id."},
	{"thread.assigned", "A thread was assigned to a member, or unassigned."},
	{"sender.health_changed", "A sender's health changed (healthy, warning, restricted, disconnected)."},
	{"invite.withdrawn", "A LinkedIn invitation pending withdraw_after_days (default 21) was withdrawn through the provider; the enrollment's invite_accepted condition takes its else branch. data: sender_id, invited_at, pending_days."},
	{"sequence.activated", "A sequence was activated."},
	{"sequence.paused", "A sequence was paused."},
	{"sequence.variant_won", "A step's variant won its test: by evidence (its posterior probability of being the best on the metric reached the step's confidence) or picked by a manager; every enrollment reaching the step from now on gets it. data: sequence_id, name, step_id, variant_id, by (evidence, manual), and for evidence metric, probability and counts (each variant's variant_id, sent, accepted, replied, positive_replies, meetings)."},
	{"sequence.variant_winner_undone", "A manager undid a step's winner: the step splits its traffic by weight again. data: sequence_id, name, step_id, variant_id, by."},
	{"sequence.rule_applied", "A sequence's rule ran for a reply (on_reply, by its intent) or a booked meeting (on_meeting_booked), once per reply or booking. data: sequence_id, sequence_name, rule (the intent, or meeting_booked), lead_id, run_id, thread_id, message_id, booking_id, done and refused (each field's outcome: field, value, status, reason, detail, lead_id, ref)."},
}

// Known reports whether t is a delivered event type.
func Known(t string) bool {
	return slices.ContainsFunc(Kinds, func(k Kind) bool { return k.Type == t })
}

// TypeOf is the delivered type of a log event, "" for one that is not
// delivered (key revocations, enrichment bookkeeping). A performed action
// is delivered as invite.sent, message.sent or action.sent.
func TypeOf(e events.Event) string {
	if e.Kind == "action.sent" {
		a, _ := e.Data["action"].(string)
		if spec, ok := senders.Action(a).Spec(); ok {
			return spec.Delivered
		}
		return "action.sent"
	}
	if Known(e.Kind) {
		return e.Kind
	}
	return ""
}
