package rules

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/sequences"
)

// SourceReplacement is the source of a lead a wrong_person rule created:
// the person a lead's reply named instead of them.
const SourceReplacement = "replacement"

// sharedMailboxes are the local parts of addresses a team shares, which
// name no person: a rule enrols no one by them.
var sharedMailboxes = []string{"info", "contact", "hello", "sales", "support", "office", "team", "admin", "help", "kontakt",
	"service", "mail", "enquiries", "inquiries", "hr", "jobs", "careers", "marketing", "noreply", "no-reply", "postmaster"}

// shared reports whether email is a shared mailbox.
func shared(email string) bool {
	local, _, _ := strings.Cut(strings.ToLower(email), "@")
	return slices.Contains(sharedMailboxes, local)
}

// enrollReplacement enrols the person a wrong_person reply names instead
// of the lead (the inbox reads the reply's address, LinkedIn profile and
// name): the workspace's lead with that address or profile, else a new
// lead of the lead's company and client. A reply that names no one
// reachable (a name alone, a shared mailbox) does nothing, and says why.
func (svc *Service) enrollReplacement(ctx context.Context, r *run) (sequences.Outcome, error) {
	rp := r.replacement
	email, linkedin := "", ""
	if rp != nil {
		email, linkedin = rp.Email, rp.LinkedIn
	}
	if email != "" && shared(email) {
		email = ""
	}
	if email == "" && linkedin == "" {
		switch {
		case rp == nil:
			return refused("no_replacement", "The reply names no one instead of the lead."), nil
		case rp.Email != "" && shared(rp.Email):
			return refused("no_replacement", fmt.Sprintf("The reply gives only a shared address (%s), which names no person.", rp.Email)), nil
		default:
			return refused("no_replacement", fmt.Sprintf("The reply names %s but gives no email address or LinkedIn profile to reach them by; leadline makes no lead from a name alone.", rp.Name)), nil
		}
	}
	person, created, err := svc.replacementLead(ctx, r, rp.Name, email, linkedin)
	if err != nil {
		return refusedBy(err)
	}
	if person.ID == r.lead.ID {
		return refused("no_replacement", "The person the reply names is the lead itself."), nil
	}
	o, err := svc.enrollIn(ctx, r, person, r.rule.EnrollReplacement, 0)
	o.LeadID = person.ID
	if created {
		o.Detail = strings.TrimSpace("Lead created for the person the reply names. " + o.Detail)
	}
	return o, err
}

// replacementLead returns the workspace's lead with the address or
// LinkedIn profile, or creates one of r's lead's company and client; it
// reports whether it created it.
func (svc *Service) replacementLead(ctx context.Context, r *run, name, email, linkedin string) (*leads.Lead, bool, error) {
	id, err := svc.leads.MatchInbound(ctx, r.q.WorkspaceID, email, "", linkedin)
	if err != nil {
		return nil, false, err
	}
	if id != "" {
		ls, err := svc.leads.ByIDs(ctx, r.q.WorkspaceID, []string{id})
		if err != nil || len(ls) == 0 {
			return nil, false, err
		}
		return &ls[0], false, nil
	}
	in := leads.LeadInput{ClientID: r.lead.ClientID, Company: r.lead.Company, Source: ptr(SourceReplacement)}
	if email != "" {
		in.EmailWork = &email
	}
	if linkedin != "" {
		in.PublicIdentifier = &linkedin
	}
	if name != "" {
		in.Name = &name
	}
	res, err := svc.leads.Upsert(ctx, r.p, in)
	if err != nil {
		return nil, false, err
	}
	return &res.Lead.Lead, res.Created, nil
}

func ptr(s string) *string { return &s }
