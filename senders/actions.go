package senders

import "strings"

// ActionSpec declares one capped action, once: everything else that knows
// the actions (the step types of sequences, daily caps and their
// ceilings, setup files, the API's enums, the reports' metrics and the
// webhooks' event types) reads it from Specs. Adding an action step is one
// entry here plus the transports that perform it.
type ActionSpec struct {
	Action  Action
	Channel Channel
	// Fields are the step's texts the action sends (templates rendered
	// with the lead's variables): note, subject, body. Required are those
	// that must not be empty; Options the step's other fields.
	Fields, Required, Options []string
	// Contacts: the action reaches the lead with words, so it counts as
	// the enrollment's first contact.
	Contacts bool
	// Ceiling is the platform's hard daily limit; Default the daily cap a
	// sender gets when its setup leaves the action out.
	Ceiling, Default int
	// Label and What name the action in reports' metrics.
	Label, What string
	// Delivered is the webhook event type its action.sent is delivered as.
	Delivered string
	// Thread: what the action sends lands in the lead's conversation
	// thread, in the inbox. Continues: it goes on in the lead's
	// conversation (the same chat, an email In-Reply-To the latest
	// message) when the sender's transport threads; an InMail always
	// starts a new one.
	Thread, Continues bool
}

// Specs are every capped action, in a stable order.
var Specs = []ActionSpec{
	{Action: ProfileView, Channel: LinkedIn, Ceiling: 150, Default: 50, Label: "Profile views", What: "LinkedIn profile visits", Delivered: "action.sent"},
	{Action: Invite, Channel: LinkedIn, Fields: []string{"note"}, Options: []string{"note_fallback"}, Contacts: true, Ceiling: 100, Default: 20,
		Label: "Invitations", What: "LinkedIn connection invitations", Delivered: "invite.sent"},
	{Action: Message, Channel: LinkedIn, Fields: []string{"body"}, Required: []string{"body"}, Contacts: true, Ceiling: 150, Default: 50,
		Label: "Messages", What: "LinkedIn messages to 1st-degree connections", Delivered: "message.sent", Thread: true, Continues: true},
	{Action: InMail, Channel: LinkedIn, Fields: []string{"subject", "body"}, Required: []string{"subject", "body"}, Contacts: true, Ceiling: 50, Default: 20,
		Label: "InMails", What: "LinkedIn InMails", Delivered: "message.sent", Thread: true},
	{Action: Follow, Channel: LinkedIn, Ceiling: 100, Default: 30, Label: "Follows", What: "LinkedIn follows", Delivered: "action.sent"},
	{Action: Like, Channel: LinkedIn, Ceiling: 100, Default: 30, Label: "Post likes", What: "likes of a lead's LinkedIn posts", Delivered: "action.sent"},
	{Action: SendEmail, Channel: Email, Fields: []string{"subject", "body"}, Required: []string{"subject", "body"}, Contacts: true, Ceiling: 200, Default: 30,
		Label: "Emails", What: "emails", Delivered: "message.sent", Thread: true, Continues: true},
}

// Spec returns the declaration of a, and false for an action that is not
// one of Specs.
func (a Action) Spec() (ActionSpec, bool) {
	for _, s := range Specs {
		if s.Action == a {
			return s, true
		}
	}
	return ActionSpec{}, false
}

// ActionNames are the actions' names in Specs' order, for enums and
// messages.
func ActionNames() []string {
	out := make([]string, len(Specs))
	for i, s := range Specs {
		out[i] = string(s.Action)
	}
	return out
}

// Listing joins names for a message: "a, b and c".
func Listing(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func actionList() []Action {
	out := make([]Action, len(Specs))
	for i, s := range Specs {
		out[i] = s.Action
	}
	return out
}

func actionLimits(ceiling bool) map[Action]int {
	out := map[Action]int{}
	for _, s := range Specs {
		if ceiling {
			out[s.Action] = s.Ceiling
		} else {
			out[s.Action] = s.Default
		}
	}
	return out
}
