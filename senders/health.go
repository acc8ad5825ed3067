package senders

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// Signals a transport reports about a sender's account.
const (
	// SignalAuthFailed: the provider refused the account's credentials.
	SignalAuthFailed = "auth_failed"
	// SignalRestricted: the provider restricted the account.
	SignalRestricted = "restriction_notice"
	// SignalLimit: the provider says a limit was hit; it lasts until the
	// sender's local midnight.
	SignalLimit = "limit_notice"
	// SignalRecovered: the provider reports the account usable again; it
	// clears every signal.
	SignalRecovered = "recovered"

	// The signals of real transports. Each stops the sender (disconnected)
	// until the transport reports it usable again, except
	// SignalProviderRateLimited, a warning that lapses at the provider's
	// hint.

	// SignalConnectionFailed: the provider's server could not be reached
	// or spoke no TLS.
	SignalConnectionFailed = "connection_failed"
	// SignalCredentialsMissing: the environment variable that holds the
	// sender's secret is not set.
	SignalCredentialsMissing = "credentials_missing"
	// SignalAccountDisconnected: the provider's connection to the account
	// dropped (a LinkedIn session ended, a checkpoint, a password
	// changed): nothing is sent until its owner connects it again.
	SignalAccountDisconnected = "account_disconnected"
	// SignalAccountNotFound: the provider has no account under the id the
	// sender's settings name (a typo, or the account was deleted there):
	// nothing is sent until the settings name one it has.
	SignalAccountNotFound = "account_not_found"
	// SignalProviderRateLimited: the provider (or the API in front of it)
	// refused calls for a while; it lasts until its retry hint, or
	// ProviderRateLimitLapse without one.
	SignalProviderRateLimited = "provider_rate_limited"
	// SignalDomainCheckFailed: the DNS of the sender's mail domain fails
	// a check receivers make (MX, SPF, DKIM or DMARC); the message says
	// what to publish. A warning, never a stop: it lasts until a check
	// of the domain passes (SignalDomainCheckPassed), and a transport's
	// recovery does not clear it.
	SignalDomainCheckFailed = "domain_check_failed"
	// SignalDomainCheckPassed: a check of the sender's mail domain found
	// nothing failing; it clears SignalDomainCheckFailed.
	SignalDomainCheckPassed = "domain_check_passed"
)

// ProviderRateLimitLapse is how long a provider_rate_limited signal keeps
// a sender in warning when the provider gave no retry hint.
const ProviderRateLimitLapse = time.Hour

// Signals is every signal, for the documentation and the API's enums.
var Signals = []string{SignalAuthFailed, SignalRestricted, SignalLimit, SignalConnectionFailed, SignalCredentialsMissing,
	SignalAccountDisconnected, SignalAccountNotFound, SignalProviderRateLimited, SignalDomainCheckFailed}

// TransportSignals are the signals a transport reports when it cannot use
// a sender's account: the sender waits for them under their own code
// (why-not-sending shows it), and wakes when the transport reports the
// account usable again.
var TransportSignals = []string{SignalAuthFailed, SignalConnectionFailed, SignalCredentialsMissing, SignalAccountDisconnected,
	SignalAccountNotFound}

// Health rules on the sender's own numbers.
const (
	// AcceptanceSample is how many of the latest settled invitations the
	// health view's acceptance rate is computed over: the window of the
	// acceptance-rate guard (guard_rates.go).
	AcceptanceSample = AcceptanceWindow
	// MaxPending is the number of pending invitations above which a sender
	// gets a warning.
	MaxPending = 500
	// InviteSettle is how old an invitation must be to count in the
	// acceptance rate: younger ones may still be accepted.
	InviteSettle = 7 * 24 * time.Hour
)

// EventHealthChanged is the activity-log kind of a sender's change of
// health state.
const EventHealthChanged = "sender.health_changed"

// HealthView is a sender's health and what it rests on.
type HealthView struct {
	SenderID           string         `json:"sender_id" format:"uuid"`
	State              Health         `json:"state" enum:"healthy,warning,restricted,disconnected"`
	Reasons            []HealthReason `json:"reasons" doc:"Why the state is not healthy; empty when healthy."`
	AcceptanceRate     *float64       `json:"acceptance_rate" doc:"Share of the latest 50 invitations older than 7 days that were accepted; null before any."`
	PendingInvitations int            `json:"pending_invitations" doc:"Invitations neither accepted nor withdrawn. Those pending withdraw_after_days (default 21) are withdrawn through the provider."`
	LastError          *string        `json:"last_error" doc:"The last error the transport reported for this sender."`
	CheckedAt          *time.Time     `json:"checked_at" doc:"When health was last computed."`
}

func stateOf(reasons []HealthReason) Health {
	state := Healthy
	for _, r := range reasons {
		switch r.Code {
		case SignalAuthFailed, SignalConnectionFailed, SignalCredentialsMissing, SignalAccountDisconnected, SignalAccountNotFound:
			return Disconnected
		case SignalRestricted:
			state = Restricted
		default:
			if state == Healthy {
				state = Warning
			}
		}
	}
	return state
}

// Signal records what a transport reported about s at the time of the
// clock, with the provider's message, and recomputes its health. It runs in
// the transaction ctx carries, or its own.
func (svc *Service) Signal(ctx context.Context, s *Sender, signal, message string) error {
	return svc.SignalUntil(ctx, s, signal, message, time.Time{})
}

// SignalUntil is Signal with the time the signal lapses by itself (the
// provider's retry hint), or zero: a limit notice lapses at the sender's
// local midnight, a rate limit in an hour, the others when the transport
// reports the account usable again.
func (svc *Service) SignalUntil(ctx context.Context, s *Sender, signal, message string, until time.Time) error {
	return svc.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, svc.clock)
		reasons := slices.DeleteFunc(slices.Clone(s.HealthReasons), func(r HealthReason) bool {
			return r.Code == signal || (signal == SignalRecovered && isSignal(r.Code) && r.Code != SignalDomainCheckFailed) ||
				(signal == SignalDomainCheckPassed && r.Code == SignalDomainCheckFailed)
		})
		switch signal {
		case SignalAuthFailed, SignalRestricted, SignalConnectionFailed, SignalCredentialsMissing, SignalAccountDisconnected, SignalAccountNotFound,
			SignalDomainCheckFailed:
			reasons = append(reasons, HealthReason{Code: signal, Message: message})
		case SignalLimit, SignalProviderRateLimited:
			if !until.After(now) {
				until = NextMidnight(now, s.Location())
				if signal == SignalProviderRateLimited {
					until = now.Add(ProviderRateLimitLapse)
				}
			}
			reasons = append(reasons, HealthReason{Code: signal, Message: message, Until: &until})
		case SignalRecovered, SignalDomainCheckPassed:
		default:
			return fmt.Errorf("senders: unknown signal %q", signal)
		}
		// The last error is the transport's; the domain's DNS is not.
		if message != "" && !slices.Contains([]string{SignalRecovered, SignalDomainCheckFailed, SignalDomainCheckPassed}, signal) {
			s.LastError = &message
		}
		s.HealthReasons = reasons
		return svc.recheck(ctx, []*Sender{s}, now, true)
	})
}

func isSignal(code string) bool { return slices.Contains(Signals, code) }

// Recheck recomputes s's health from
// its signals and its numbers, writing an event when the state changes.
func (svc *Service) Recheck(ctx context.Context, s *Sender) error {
	return svc.RecheckAll(ctx, []*Sender{s})
}

// RecheckAll rechecks every sender of ss as Recheck does one, in the
// transaction ctx carries or its own, with a few statements for all of
// them: the runner's hourly checks.
func (svc *Service) RecheckAll(ctx context.Context, ss []*Sender) error {
	return svc.db.InTx(ctx, func(ctx context.Context) error {
		return svc.recheck(ctx, ss, db.Now(ctx, svc.clock), false)
	})
}

// recheck recomputes the health of ss at now. A sender whose reasons did
// not change gets only its check time written, unless save asks for the
// whole sender to be saved (its caller changed more).
func (svc *Service) recheck(ctx context.Context, ss []*Sender, now time.Time, save bool) error {
	var linkedin []string
	for _, s := range ss {
		if s.Channel == LinkedIn {
			linkedin = append(linkedin, s.ID)
		}
	}
	stats, err := svc.store.InvitationStats(ctx, linkedin, now.Add(-InviteSettle), AcceptanceSample)
	if err != nil {
		return err
	}
	guarded, err := svc.review(ctx, ss, now)
	if err != nil {
		return err
	}
	var evs []events.Event
	var unchanged []string
	for _, s := range ss {
		// Signals that lapsed are dropped; rules on numbers are recomputed.
		reasons := slices.DeleteFunc(slices.Clone(s.HealthReasons), func(r HealthReason) bool {
			return !isSignal(r.Code) || (r.Until != nil && !r.Until.After(now))
		})
		if s.Channel == LinkedIn {
			if st := stats[s.ID]; st.Pending > MaxPending {
				reasons = append(reasons, HealthReason{Code: "too_many_pending",
					Message: fmt.Sprintf("%d invitations are pending (more than %d); LinkedIn restricts accounts with many unanswered invitations.", st.Pending, MaxPending)})
			}
		}
		// The guards that stop a sender hold their reasons while their
		// review finds them (guards.go).
		reasons = append(reasons, guarded[s.ID]...)
		changed := save || !slices.EqualFunc(reasons, s.HealthReasons, sameReason)
		before := s.Health
		s.HealthReasons = reasons
		s.Health = stateOf(reasons)
		s.HealthCheckedAt = &now
		if s.Health != before {
			changed = true
			s.UpdatedAt = now
			codes := []string{}
			for _, r := range reasons {
				codes = append(codes, r.Code)
			}
			evs = append(evs, events.Event{WorkspaceID: s.WorkspaceID, SenderID: s.ID, Kind: EventHealthChanged,
				Data: map[string]any{"sender_id": s.ID, "from": string(before), "to": string(s.Health), "reasons": codes}})
		}
		if !changed {
			unchanged = append(unchanged, s.ID)
			continue
		}
		if err := svc.store.Save(ctx, s, false); err != nil {
			return err
		}
	}
	if len(evs) > 0 {
		if err := svc.log.EmitMany(ctx, evs); err != nil {
			return err
		}
	}
	return svc.store.MarkChecked(ctx, unchanged, now)
}

func sameReason(a, b HealthReason) bool {
	return a.Code == b.Code && a.Message == b.Message &&
		(a.Until == nil) == (b.Until == nil) && (a.Until == nil || a.Until.Equal(*b.Until))
}

// health builds the health view of s.
func (svc *Service) health(ctx context.Context, s *Sender) (*HealthView, error) {
	v := &HealthView{SenderID: s.ID, State: s.Health, Reasons: s.HealthReasons, LastError: s.LastError, CheckedAt: s.HealthCheckedAt}
	if v.Reasons == nil {
		v.Reasons = []HealthReason{}
	}
	if s.Channel == LinkedIn {
		stats, err := svc.store.InvitationStats(ctx, []string{s.ID}, svc.clock.Now().Add(-InviteSettle), AcceptanceSample)
		if err != nil {
			return nil, err
		}
		st := stats[s.ID]
		if st.Sent > 0 {
			r := float64(st.Accepted) / float64(st.Sent)
			v.AcceptanceRate = &r
		}
		v.PendingInvitations = st.Pending
	}
	return v, nil
}

// RecordInvite records that s sent lead an invitation at the time of the
// clock, inside the transaction ctx carries, with the provider's ids of
// the invitation and of the person when the transport reported them (""
// when not).
func (svc *Service) RecordInvite(ctx context.Context, s *Sender, leadID string, withNote bool, invitation, memberID string) error {
	return svc.store.InsertInvitation(ctx, &Invitation{ID: apikit.NewID(), WorkspaceID: s.WorkspaceID, SenderID: s.ID,
		LeadID: leadID, WithNote: withNote, SentAt: db.Now(ctx, svc.clock), ProviderID: nonEmpty(invitation), MemberID: nonEmpty(memberID)})
}

// PendingInvitations returns up to limit of s's invitations that are
// neither accepted nor withdrawn, newest first: a transport's polling
// compares them with the provider's list (senders.Invitations).
func (svc *Service) PendingInvitations(ctx context.Context, senderID string, limit int) ([]SentInvitation, error) {
	return svc.store.PendingInvitations(ctx, senderID, limit)
}

// InvitationLead returns the lead of s's invitation that the provider
// calls invitation, or else of its invitation to the person memberID; ""
// when s sent none. An acceptance that names no id a lead holds is
// matched this way.
func (svc *Service) InvitationLead(ctx context.Context, s *Sender, invitation, memberID string) (string, error) {
	return svc.store.InvitationLead(ctx, s.ID, invitation, memberID)
}

func nonEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// InviteAccepted marks s's pending invitation to lead accepted, and reports
// whether there was one.
func (svc *Service) InviteAccepted(ctx context.Context, s *Sender, leadID string) (*time.Time, error) {
	return svc.store.AcceptInvitation(ctx, s.ID, leadID, db.Now(ctx, svc.clock))
}

// Invited reports whether the sender and the lead are connected (the
// lead accepted one of the sender's invitations) and whether one of its
// invitations to the lead was withdrawn.
func (svc *Service) Invited(ctx context.Context, senderID, leadID string) (connected, withdrawn bool, err error) {
	// The runner asks at every acceptance condition: one statement,
	// prepared once per connection, through the pair's unique index.
	var n []struct {
		Accepted  int `bun:"accepted"`
		Withdrawn int `bun:"withdrawn"`
	}
	err = svc.db.SelectPrepared(ctx, &n, "SELECT count(accepted_at) AS accepted, count(withdrawn_at) AS withdrawn FROM invitations WHERE sender_id = ? AND lead_id = ?",
		senderID, leadID)
	if err != nil || len(n) == 0 {
		return false, false, err
	}
	return n[0].Accepted > 0, n[0].Withdrawn > 0, nil
}
