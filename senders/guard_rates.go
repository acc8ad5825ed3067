package senders

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// The samples the rate guards judge a sender on.
const (
	// AcceptanceWindow is how many of a sender's latest settled
	// invitations (sent at least InviteSettle ago) its acceptance rate is
	// computed over; the guard judges only a full window.
	AcceptanceWindow = 50
	// BounceWindow is how many of a mailbox's latest emails its bounce
	// rate is computed over, and BounceMinSample how many it needs before
	// it judges.
	BounceWindow    = 100
	BounceMinSample = 30
)

// acceptanceGuard pauses a LinkedIn account's invitations when too few of
// them are accepted: LinkedIn restricts accounts whose invitations are
// ignored or declined. Messages to existing connections go on. The stop
// lasts until a manager resumes the sender (the window then starts again
// from the resumption) or lowers min_acceptance_rate.
type acceptanceGuard struct{ noDayCap }

func (acceptanceGuard) Code() string { return GuardLowAcceptance }

func (acceptanceGuard) Check(_ context.Context, _ *Service, s *Sender, a Action, _, _ time.Time) (*Blocked, func(context.Context) error, error) {
	if a != Invite {
		return nil, nil, nil
	}
	return stopCheck(s, GuardLowAcceptance), nil, nil
}

func (acceptanceGuard) Review(ctx context.Context, svc *Service, ss []*Sender, now time.Time) (map[string]HealthReason, error) {
	var judged []SampleOf
	for _, s := range ss {
		if s.MinAcceptanceRateOf() > 0 {
			judged = append(judged, SampleOf{SenderID: s.ID, Since: s.GuardsResumed[GuardLowAcceptance]})
		}
	}
	if len(judged) == 0 {
		return nil, nil
	}
	stats, err := svc.store.AcceptanceSample(ctx, judged, now.Add(-InviteSettle), AcceptanceWindow)
	if err != nil {
		return nil, err
	}
	out := map[string]HealthReason{}
	for _, s := range ss {
		st, bar := stats[s.ID], s.MinAcceptanceRateOf()
		if bar <= 0 || st.Sent < AcceptanceWindow || float64(st.Hits) >= bar*float64(st.Sent) {
			continue
		}
		out[s.ID] = HealthReason{Code: GuardLowAcceptance,
			Message: fmt.Sprintf("Only %d of the latest %d invitations at least 7 days old were accepted (%.0f%%, below min_acceptance_rate %.0f%%): invitations pause, messages go on; LinkedIn restricts accounts whose invitations are ignored.",
				st.Hits, st.Sent, 100*float64(st.Hits)/float64(st.Sent), 100*bar),
			Remedy: "Narrow the sequences' lists to people likelier to accept and personalise the note, then resume the sender's invitations on its console page (or lower min_acceptance_rate in the setup file)."}
	}
	return out, nil
}

func (acceptanceGuard) Text() (string, string) {
	return "%d enrollments wait: their sender's invitations pause for a low acceptance rate.",
		"Improve targeting, then resume the sender's invitations on its console page (GET /v1/senders/{id}/health shows the rate)."
}

// bounceGuard stops a mailbox whose hard bounces (5.x.x) pass
// max_bounce_rate of its latest emails: receivers block domains that mail
// unknown addresses. Soft bounces (4.x.x) do not count. The stop lasts
// until a manager resumes the sender; the window then starts again.
type bounceGuard struct{ noDayCap }

func (bounceGuard) Code() string { return GuardHighBounceRate }

func (bounceGuard) Check(_ context.Context, _ *Service, s *Sender, a Action, _, _ time.Time) (*Blocked, func(context.Context) error, error) {
	if a.Channel() != Email {
		return nil, nil, nil
	}
	return stopCheck(s, GuardHighBounceRate), nil, nil
}

func (bounceGuard) Review(ctx context.Context, svc *Service, ss []*Sender, _ time.Time) (map[string]HealthReason, error) {
	var judged []SampleOf
	for _, s := range ss {
		if s.MaxBounceRateOf() > 0 {
			judged = append(judged, SampleOf{SenderID: s.ID, Since: s.GuardsResumed[GuardHighBounceRate]})
		}
	}
	if len(judged) == 0 {
		return nil, nil
	}
	stats, err := svc.store.BounceSample(ctx, judged, BounceWindow)
	if err != nil {
		return nil, err
	}
	out := map[string]HealthReason{}
	for _, s := range ss {
		st, limit := stats[s.ID], s.MaxBounceRateOf()
		if limit <= 0 || st.Sent < BounceMinSample || float64(st.Hits) <= limit*float64(st.Sent) {
			continue
		}
		out[s.ID] = HealthReason{Code: GuardHighBounceRate,
			Message: fmt.Sprintf("%d of the latest %d emails bounced hard (%.1f%%, above max_bounce_rate %.1f%%): sending stopped before receivers block the domain.",
				st.Hits, st.Sent, 100*float64(st.Hits)/float64(st.Sent), 100*limit),
			Remedy: "Verify or clean the leads' addresses, then resume the sender on its console page."}
	}
	return out, nil
}

func (bounceGuard) Text() (string, string) {
	return "%d enrollments wait: their mailbox stopped for a high bounce rate.",
		"Clean the list's addresses, then resume the sender on its console page (GET /v1/senders/{id}/health shows the rate)."
}

// hardBounce matches an enhanced status code of a permanent failure
// (RFC 3463: 5.x.x).
var hardBounce = regexp.MustCompile(`(^|[^0-9.])5\.[0-9]{1,3}\.[0-9]{1,3}([^0-9.]|$)`)

// softBounce matches one of a temporary failure (4.x.x).
var softBounce = regexp.MustCompile(`(^|[^0-9.])4\.[0-9]{1,3}\.[0-9]{1,3}([^0-9.]|$)`)

// HardBounce reports whether a bounce's message reports a permanent
// failure: a 5.x.x status, or a 5xx reply with no status at all. A 4.x.x
// status is a delay, a soft bounce.
func HardBounce(message string) bool {
	if hardBounce.MatchString(message) {
		return true
	}
	if softBounce.MatchString(message) {
		return false
	}
	return len(message) >= 3 && message[0] == '5' && message[1] >= '0' && message[1] <= '9' && message[2] >= '0' && message[2] <= '9'
}
