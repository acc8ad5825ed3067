// Package reports holds leadline's read-side aggregations. Every number a
// report shows is one of the metrics defined here. Rollups per local day,
// client, sequence and sender are kept in the transaction of the events
// they count (rollup.go), rebuilt from the log on demand (Rebuild), and
// read by the eleven reports (query.go, views.go); no report scans the log.
package reports

import "github.com/leadline/leadline/senders"

// Definition says what a metric means and how it is computed.
type Definition struct {
	Label       string `json:"label" doc:"Short name for tables and charts."`
	Description string `json:"description" doc:"What the metric means."`
	Unit        string `json:"unit" enum:"count,ratio,usd,seconds" doc:"count, ratio (0..1), usd or seconds."`
	Computation string `json:"computation" doc:"How the value is computed from the activity log."`
}

var intents = []struct{ key, label string }{
	{"interested", "Interested"}, {"question", "Question"}, {"not_now", "Not now"},
	{"not_interested", "Not interested"}, {"ooo", "Out of office"}, {"wrong_person", "Wrong person"}, {"unclear", "Unclear"},
}

// Definitions returns every metric, keyed by metric key.
func Definitions() map[string]Definition {
	d := map[string]Definition{
		"sends.total": {Label: "Actions sent", Unit: "count",
			Description: "Every action senders performed, all kinds together: sequence steps, replies sent from the inbox and enrichment profile views.",
			Computation: "Count of action.sent events in the period."},
		"invites.accepted": {Label: "Invitations accepted", Unit: "count",
			Description: "Connection invitations the lead accepted.",
			Computation: "Count of invite.accepted events in the period."},
		"acceptance_rate": {Label: "Acceptance rate", Unit: "ratio",
			Description: "Share of invitations sent in the period that were accepted (so far).",
			Computation: "invites.accepted for invitations sent in the period / sends.invite."},
		"replies": {Label: "Replies", Unit: "count",
			Description: "Threads in which a lead replied for the first time, on LinkedIn or by email; an out-of-office reply counts (intents.ooo shows how many).",
			Computation: "Count of threads whose first inbound message (the first message.classified event of the thread with a message_id) came in the period; later messages in the same thread do not count."},
		"reply_rate": {Label: "Reply rate", Unit: "ratio",
			Description: "Share of contacted leads who replied.",
			Computation: "replies / leads.contacted."},
		"positive_reply_rate": {Label: "Positive reply rate", Unit: "ratio",
			Description: "Share of replies classified interested or question.",
			Computation: "(intents.interested + intents.question) / replies."},
		"leads.contacted": {Label: "Leads contacted", Unit: "count",
			Description: "Leads that received a first invitation, message, InMail or email, counted once per sequence that contacted them.",
			Computation: "Count of distinct (lead_id, sequence_id) pairs whose first action.sent event of those kinds fell in the period."},
		"leads.created": {Label: "Leads created", Unit: "count",
			Description: "Leads added to the workspace.",
			Computation: "Count of lead.created events."},
		"enrollments.started": {Label: "Enrollments", Unit: "count",
			Description: "Leads enrolled in a sequence.",
			Computation: "Count of enrollment.created events."},
		"enrollments.finished": {Label: "Finished enrollments", Unit: "count",
			Description: "Enrollments that reached the end of their sequence, exited, or stopped on a reply.",
			Computation: "Count of enrollment.finished, enrollment.exited, enrollment.stopped and enrollment.replied events."},
		"meetings.booked": {Label: "Meetings booked", Unit: "count",
			Description: "Meetings booked by leads, as reported by the calendar provider.",
			Computation: "Count of meeting.booked events."},
		"meeting_rate": {Label: "Meeting rate", Unit: "ratio",
			Description: "Share of contacted leads who booked a meeting.",
			Computation: "meetings.booked / leads.contacted."},
		"emails.bounced": {Label: "Bounces", Unit: "count",
			Description: "Emails the receiving server refused.",
			Computation: "Count of email.bounced events."},
		"bounce_rate": {Label: "Bounce rate", Unit: "ratio",
			Description: "Share of emails that bounced.",
			Computation: "emails.bounced / sends.email."},
		"time_to_reply": {Label: "Median time to reply", Unit: "seconds",
			Description: "Median time between a sequence's first contact of a lead and the lead's first reply in the thread.",
			Computation: "Median over the period's replies of (first reply time - time of the first contacting action.sent of the lead by the thread's sequence), in whole seconds; for an even count the mean of the middle two, rounded down. Replies without a contact before them are left out."},
		"cost.total": {Label: "Cost", Unit: "usd",
			Description: "What the senders used cost: each sender's daily cost, split over the clients and sequences it worked for by their share of its actions.",
			Computation: "Sum over senders and days of daily_cost x (actions for the subject / all actions of the sender that day), where daily_cost = monthly_cost / the days of that month, from the day the sender was added until today; a day without actions counts in full for the sender and its client, for no sequence. Rounded to the cent."},
		"cost.per_reply": {Label: "Cost per reply", Unit: "usd",
			Description: "Cost divided by replies.",
			Computation: "cost.total / replies; absent when there were no replies."},
		"cost.per_meeting": {Label: "Cost per meeting", Unit: "usd",
			Description: "Cost divided by meetings booked.",
			Computation: "cost.total / meetings.booked; absent when no meeting was booked."},
	}
	for _, a := range senders.Specs {
		key := string(a.Action)
		d["sends."+key] = Definition{Label: a.Label + " sent", Unit: "count",
			Description: "Number of " + a.What + " senders performed.",
			Computation: "Count of action.sent events with action " + key + "."}
	}
	for _, i := range intents {
		d["intents."+i.key] = Definition{Label: i.label + " replies", Unit: "count",
			Description: "Replies classified with intent " + i.key + ".",
			Computation: "Count of the period's replies (see replies) whose thread has intent " + i.key + " now: the latest intent message.classified gave it; a thread counts once, on the day of its first reply."}
	}
	return d
}
