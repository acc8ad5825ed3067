// Package bookings turns meetings booked with a scheduling provider
// (Cal.com, Calendly, or the sandbox network) into meeting.booked events:
// it verifies each provider's webhook with its own signature scheme and the
// workspace's signing secret, matches the invitee's email to a lead, and
// keeps each booking once.
package bookings

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
)

// Providers.
const (
	CalCom   = "calcom"
	Calendly = "calendly"
	Sandbox  = "sandbox"
)

// EventBooked is the activity-log kind of a booked meeting.
const EventBooked = "meeting.booked"

// Tolerance is how far a Calendly signature's timestamp may be from now.
const Tolerance = 5 * time.Minute

// Booking is one booked meeting.
type Booking struct {
	bun.BaseModel `bun:"table:bookings,alias:bk"`

	ID           string    `bun:"id,pk" json:"id"`
	WorkspaceID  string    `bun:"workspace_id" json:"-"`
	Provider     string    `bun:"provider" json:"provider"`
	BookingID    string    `bun:"booking_id" json:"booking_id"`
	LeadID       *string   `bun:"lead_id" json:"lead_id"`
	SenderID     *string   `bun:"sender_id" json:"sender_id"`
	InviteeEmail string    `bun:"invitee_email" json:"invitee_email"`
	StartsAt     time.Time `bun:"starts_at" json:"starts_at"`
	CreatedAt    time.Time `bun:"created_at" json:"created_at"`
}

// Leads is what bookings need of the leads area.
type Leads interface {
	// ByEmail returns the workspace's lead with email as its work or
	// personal address (case-insensitive). Returns an error that
	// db.IsNoRows recognises if no lead has it.
	ByEmail(ctx context.Context, workspaceID, email string) (*leads.Lead, error)
}

// Conversations is what bookings need of the inbox: the conversation a
// meeting came from.
type Conversations interface {
	// LatestConversation returns the sender, sequence and client of the
	// lead's latest thread (with senderID, when it is not empty); an empty
	// sender when the lead has none. Returns only the database's errors.
	LatestConversation(ctx context.Context, leadID, senderID string) (sender string, sequenceID, clientID *string, err error)
}

// Service books meetings.
type Service struct {
	db    *db.DB
	clock apikit.Clock
	leads Leads
	conv  Conversations
	log   events.Emitter
	key   secret.Key
}

// NewService returns the bookings service on d. The providers' signing
// secrets are stored sealed under key; without a key, SetSecrets refuses
// with secret.ErrNoKey.
// A meeting counts for the conversation conv finds it came from (nil: for
// none).
func NewService(d *db.DB, clock apikit.Clock, ls Leads, conv Conversations, log events.Emitter, key secret.Key) *Service {
	return &Service{db: d, clock: clock, leads: ls, conv: conv, log: log, key: key}
}

// Secrets are the signing secrets of the scheduling providers whose
// webhooks book meetings for a workspace (POST /inbound/calcom/{workspace_id}
// and /inbound/calendly/{workspace_id}): a setup file's bookings.
type Secrets struct {
	CalCom   string `yaml:"calcom_secret"`
	Calendly string `yaml:"calendly_secret"`
}

// SetSecrets stores the workspace's providers' signing secrets, sealed
// under the server's key with the workspace and provider as associated
// data, in the transaction ctx carries, and returns a line per secret that
// changed. An empty secret keeps the stored one; the same secret again
// changes nothing.
// Returns E_CONFLICT on a server without a secret key.
func (svc *Service) SetSecrets(ctx context.Context, workspaceID string, s Secrets) ([]string, error) {
	var changes []string
	for _, b := range [][2]string{{CalCom, s.CalCom}, {Calendly, s.Calendly}} {
		provider, plain := b[0], b[1]
		if plain == "" {
			continue
		}
		aad := secret.BookingSecrets.AAD(workspaceID, provider)
		var stored []string
		if err := svc.db.IDB(ctx).NewSelect().Table("booking_secrets").Column("secret").Where("workspace_id = ? AND provider = ?", workspaceID, provider).
			Scan(ctx, &stored); err != nil {
			return nil, err
		}
		// A value that does not open (sealed under a key since replaced)
		// is simply replaced by the one the file gives.
		if len(stored) > 0 {
			if was, err := svc.key.OpenString(stored[0], aad); err == nil && was == plain {
				continue
			}
		}
		sealed, err := svc.key.SealString(plain, aad)
		if err != nil {
			return nil, err
		}
		if _, err := svc.db.IDB(ctx).NewRaw(`INSERT INTO booking_secrets (workspace_id, provider, secret, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (workspace_id, provider) DO UPDATE SET secret = excluded.secret, updated_at = excluded.updated_at`,
			workspaceID, provider, sealed, db.Now(ctx, svc.clock)).Exec(ctx); err != nil {
			return nil, err
		}
		changes = append(changes, provider+" booking secret set")
	}
	return changes, nil
}

// Errors of Receive, each with the HTTP status a provider should see.
var (
	ErrUnknownWorkspace = errors.New("bookings: no such workspace, or it has no secret for this provider")
	ErrBadSignature     = errors.New("bookings: the signature does not match")
)

// Book records a booking once per provider and booking id and, the first
// time, writes meeting.booked (lead_id, sender_id, provider, starts_at,
// booking_id) in the same transaction. The sender is the one that last
// wrote to the lead. It fills b's lead and sender and reports whether the
// booking was new.
func (svc *Service) Book(ctx context.Context, b *Booking) (bool, error) {
	var added bool
	err := svc.db.InTx(ctx, func(ctx context.Context) error {
		if b.LeadID == nil && b.InviteeEmail != "" {
			l, err := svc.leads.ByEmail(ctx, b.WorkspaceID, b.InviteeEmail)
			if err != nil && !db.IsNoRows(err) {
				return err
			}
			if err == nil {
				b.LeadID = &l.ID
			}
		}
		// The meeting counts for the conversation it came from: the lead's
		// latest thread (with the sender, when known), its sequence and
		// client.
		var sequenceID, clientID *string
		if b.LeadID != nil && svc.conv != nil {
			sender, seq, client, err := svc.conv.LatestConversation(ctx, *b.LeadID, apikit.Deref(b.SenderID))
			if err != nil {
				return err
			}
			sequenceID, clientID = seq, client
			if b.SenderID == nil && sender != "" {
				b.SenderID = &sender
			}
		}
		b.ID, b.CreatedAt = apikit.NewID(), db.Now(ctx, svc.clock)
		var err error
		if added, err = db.InsertIfAbsent(ctx, svc.db.IDB(ctx), b, "workspace_id, provider, booking_id"); err != nil || !added {
			return err
		}
		if b.LeadID == nil {
			return nil // not a lead of this workspace: kept, not an event
		}
		return svc.log.EmitMany(ctx, []events.Event{{WorkspaceID: b.WorkspaceID, LeadID: *b.LeadID, SenderID: apikit.Deref(b.SenderID),
			SequenceID: apikit.Deref(sequenceID), ClientID: apikit.Deref(clientID), Kind: EventBooked, Data: map[string]any{"lead_id": *b.LeadID, "sender_id": b.SenderID, "provider": b.Provider,
				"starts_at": b.StartsAt.UTC(), "booking_id": b.BookingID}}})
	})
	return added, err
}

// signingSecret returns the workspace's signing secret for provider,
// opened.
func (svc *Service) signingSecret(ctx context.Context, workspaceID, provider string) (string, error) {
	if !apikit.ValidID(workspaceID) {
		return "", ErrUnknownWorkspace
	}
	var s []string
	err := svc.db.NewSelect().Table("booking_secrets").Column("secret").Where("workspace_id = ? AND provider = ?", workspaceID, provider).Scan(ctx, &s)
	if err != nil {
		return "", err
	}
	if len(s) == 0 {
		return "", ErrUnknownWorkspace
	}
	return svc.key.OpenString(s[0], secret.BookingSecrets.AAD(workspaceID, provider))
}

// Verify reads a provider's webhook for a workspace: it verifies the
// signature and reads the booking, and writes nothing (the booking is
// queued for a worker, which books it with Book). A webhook about
// something other than a new booking is accepted and ignored (nil
// booking), so that the provider does not retry it.
// Returns ErrUnknownWorkspace, ErrBadSignature or ErrUnreadable.
func (svc *Service) Verify(ctx context.Context, provider, workspaceID string, h http.Header, body []byte) (*Booking, error) {
	secret, err := svc.signingSecret(ctx, workspaceID, provider)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(body) {
		return nil, fmt.Errorf("%w: the body is not valid UTF-8", ErrUnreadable)
	}
	var b *Booking
	switch provider {
	case CalCom:
		if !hmac.Equal([]byte(strings.ToLower(h.Get("X-Cal-Signature-256"))), []byte(hexHMAC(secret, body))) {
			return nil, ErrBadSignature
		}
		b, err = parseCalCom(body)
	case Calendly:
		if err := verifyCalendly(secret, h.Get("Calendly-Webhook-Signature"), body, svc.clock.Now()); err != nil {
			return nil, err
		}
		b, err = parseCalendly(body)
	default:
		return nil, ErrUnknownWorkspace
	}
	if err != nil || b == nil {
		return nil, err
	}
	if err := check(b, svc.clock.Now()); err != nil {
		return nil, err
	}
	b.WorkspaceID, b.Provider = workspaceID, provider
	return b, nil
}

// Seen says what booking b will come to, without writing anything: the
// lead its invitee's email matches (nil for none) and whether the
// provider's booking id is recorded already (a replay books nothing).
func (svc *Service) Seen(ctx context.Context, b *Booking) (leadID *string, recorded bool, err error) {
	if b.InviteeEmail != "" {
		l, err := svc.leads.ByEmail(ctx, b.WorkspaceID, b.InviteeEmail)
		if err != nil && !db.IsNoRows(err) {
			return nil, false, err
		}
		if err == nil {
			leadID = &l.ID
		}
	}
	recorded, err = svc.db.NewSelect().Table("bookings").Where("workspace_id = ? AND provider = ? AND booking_id = ?",
		b.WorkspaceID, b.Provider, b.BookingID).Exists(ctx)
	return leadID, recorded, err
}

func hexHMAC(secret string, parts ...[]byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// verifyCalendly checks "t=<unix>,v1=<hex HMAC-SHA256(secret, t.body)>"
// and that t is within Tolerance of now.
func verifyCalendly(secret, header string, body []byte, now time.Time) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return ErrBadSignature
	}
	if !hmac.Equal([]byte(strings.ToLower(sig)), []byte(hexHMAC(secret, []byte(ts+"."), body))) {
		return ErrBadSignature
	}
	return nil
}

// ErrUnreadable is a webhook body that is not the provider's shape, or
// whose values no booking can hold.
var ErrUnreadable = errors.New("bookings: the body is not a booking webhook")

// Bounds of a booking's values: a provider's id and an email address of
// sane length, and a start within two years of now.
const (
	MaxBookingIDLength = 512
	MaxEmailLength     = 254
	StartsWithin       = 2 * 366 * 24 * time.Hour
)

// check refuses a booking whose values no row can hold or no provider
// sends: control characters or invalid UTF-8 in its id or email, values
// over their bounds, a start more than two years from now.
func check(b *Booking, now time.Time) error {
	for _, f := range []struct {
		name, value string
		max         int
	}{{"booking id", b.BookingID, MaxBookingIDLength}, {"invitee email", b.InviteeEmail, MaxEmailLength}} {
		if !utf8.ValidString(f.value) || strings.IndexFunc(f.value, unicode.IsControl) >= 0 {
			return fmt.Errorf("%w: the %s holds a control character or invalid UTF-8", ErrUnreadable, f.name)
		}
		if len(f.value) > f.max {
			return fmt.Errorf("%w: the %s is over %d bytes", ErrUnreadable, f.name, f.max)
		}
	}
	if d := b.StartsAt.Sub(now); d > StartsWithin || d < -StartsWithin {
		return fmt.Errorf("%w: the start time %s is more than two years from now", ErrUnreadable, b.StartsAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// parseCalCom reads a BOOKING_CREATED webhook; nil for other triggers.
func parseCalCom(body []byte) (*Booking, error) {
	var v struct {
		TriggerEvent string `json:"triggerEvent"`
		Payload      struct {
			UID       string    `json:"uid"`
			StartTime time.Time `json:"startTime"`
			Attendees []struct {
				Email string `json:"email"`
			} `json:"attendees"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	if v.TriggerEvent != "BOOKING_CREATED" {
		return nil, nil
	}
	if v.Payload.UID == "" || len(v.Payload.Attendees) == 0 || v.Payload.StartTime.IsZero() {
		return nil, ErrUnreadable
	}
	return &Booking{BookingID: v.Payload.UID, InviteeEmail: v.Payload.Attendees[0].Email, StartsAt: v.Payload.StartTime}, nil
}

// parseCalendly reads an invitee.created webhook; nil for other events.
func parseCalendly(body []byte) (*Booking, error) {
	var v struct {
		Event   string `json:"event"`
		Payload struct {
			URI            string `json:"uri"`
			Email          string `json:"email"`
			ScheduledEvent struct {
				StartTime time.Time `json:"start_time"`
			} `json:"scheduled_event"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	if v.Event != "invitee.created" {
		return nil, nil
	}
	if v.Payload.URI == "" || v.Payload.Email == "" || v.Payload.ScheduledEvent.StartTime.IsZero() {
		return nil, ErrUnreadable
	}
	return &Booking{BookingID: v.Payload.URI, InviteeEmail: v.Payload.Email, StartsAt: v.Payload.ScheduledEvent.StartTime}, nil
}
