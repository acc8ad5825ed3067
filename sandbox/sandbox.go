// Package sandbox is leadline's built-in sandbox network: a deterministic,
// seeded model of LinkedIn and email that stands in for real providers. It
// performs actions (each key once), answers with acceptances, replies in
// several intents, out-of-office auto-replies and bounces, restricts an
// account pushed past LinkedIn's real limits, and keeps its own count of
// what every sender did, so that it judges the runner independently.
package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/senders"
)

// Rates are the chances of each outcome.
type Rates struct {
	Accept    float64 // an invitation is accepted
	Reply     float64 // a message, InMail or email is answered
	AutoReply float64 // share of answers that are out-of-office replies
	Bounce    float64 // an email bounces
	// Variants answer one step's variant at its own rates, by
	// "STEP/VARIANT" (ParseVariantRate): a simulated A/B test.
	Variants map[string]VariantRate
	// Sync is how often the providers report what happened: an acceptance,
	// a reply, a bounce or a booking reaches leadline at the first sync
	// after it happened, as outreach tools learn of new connections and
	// messages by polling the account. Zero reports each at once.
	Sync time.Duration
}

// DefaultRates are plausible outreach numbers, with a sync every 10
// minutes.
var DefaultRates = Rates{Accept: 0.35, Reply: 0.18, AutoReply: 0.15, Bounce: 0.03, Sync: 10 * time.Minute}

// LinkedIn's own limits, above leadline's ceilings: an account that passes
// them is restricted.
const (
	realInvitesPerDay  = 150
	realInvitesPerWeek = 250
)

// Outcome scripts what happens after an action to one lead, for tests.
type Outcome struct {
	Accept      bool
	AcceptAfter time.Duration
	Reply       string
	ReplyAfter  time.Duration
	AutoReply   bool
	Bounce      bool
}

// Violation is a rule the sandbox saw broken by what it received.
type Violation struct {
	Rule     string // cap, warmup, weekly_invite_cap, schedule, spacing, hourly_cap, holiday, do_not_contact, blacklist, reply_stop, withdrawal
	SenderID string
	LeadID   string
	Action   senders.Action
	At       time.Time
	Detail   string
}

// Performed is one action the network received.
type Performed struct {
	Key      string
	SenderID string
	LeadID   string
	Action   senders.Action
	Day      string
	At       time.Time
	WithNote bool
	Purpose  string
	// StepID and VariantID: the sequence's step and its variant, as the
	// request named them.
	StepID, VariantID string
}

// Network is the sandbox. It is safe for concurrent use.
type Network struct {
	mu      sync.Mutex
	seed    int64
	clock   apikit.Clock
	rates   Rates
	results map[string]senders.Result
	pending []senders.Inbound
	// booked are meetings booked, by when they reach leadline, in order.
	booked []bookings.Booking

	configs     map[string]senders.Sender
	counts      map[string]int // sender|day|action
	dnc         map[string]time.Time
	blacklisted map[string]bool
	replied     map[string][]time.Time // when each lead's replies were handed over, in order
	violations  []Violation
	performed   []Performed
	scripts     map[string]Outcome
	failures    map[string][]error
	seq         int
	// drawn counts the actions of each kind performed for each person, for
	// the keys of the outcomes' draws.
	drawn map[string]int
	// last is when each sender last acted for a sequence (the spacing
	// audit).
	last map[string]time.Time
	// invited is when each sender invited each lead (sender|lead), and
	// accepted and withdrawn what became of it: the pending invitations
	// a withdrawal judges (withdraw.go).
	invited     map[string]time.Time
	accepted    map[string]bool
	withdrawn   map[string]bool
	withdrawals int
	// shared keeps what every process must see alike in the database
	// (nil: in memory).
	shared *shared
}

// New returns a network whose randomness comes from seed.
func New(seed int64, clock apikit.Clock, rates Rates) *Network {
	return &Network{seed: seed, clock: clock, rates: rates, results: map[string]senders.Result{},
		configs: map[string]senders.Sender{}, counts: map[string]int{}, dnc: map[string]time.Time{},
		blacklisted: map[string]bool{}, replied: map[string][]time.Time{}, scripts: map[string]Outcome{}, failures: map[string][]error{}, drawn: map[string]int{},
		last: map[string]time.Time{}, invited: map[string]time.Time{}, accepted: map[string]bool{}, withdrawn: map[string]bool{}}
}

// Register gives the network a sender's configuration to judge it by: its
// own copy, independent of what the runner later says.
func (n *Network) Register(s senders.Sender) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.configs[s.ID] = s
}

// MarkDoNotContact tells the network that the lead may not be contacted
// from at on.
func (n *Network) MarkDoNotContact(leadID string, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dnc[leadID] = at
}

// MarkBlacklisted tells the network that the lead is on a blacklist.
func (n *Network) MarkBlacklisted(leadID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blacklisted[leadID] = true
}

// Script fixes what happens after actions to a lead.
func (n *Network) Script(leadID string, o Outcome) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.scripts[leadID] = o
}

// FailNext makes the sender's next actions fail with errs, in order.
func (n *Network) FailNext(senderID string, errs ...error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.failures[senderID] = append(n.failures[senderID], errs...)
}

// Deliver queues an inbound event, for tests.
func (n *Network) Deliver(in senders.Inbound) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.queue(context.Background(), in); err != nil {
		panic(err)
	}
}

// DeliverBooking queues a meeting booked, reaching leadline at b.CreatedAt,
// for tests.
func (n *Network) DeliverBooking(b bookings.Booking) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.book(context.Background(), b); err != nil {
		panic(err)
	}
}

func (n *Network) book(ctx context.Context, b bookings.Booking) error {
	b.Provider, b.CreatedAt = bookings.Sandbox, b.CreatedAt.Truncate(time.Microsecond)
	if n.shared != nil {
		return n.shared.book(ctx, b)
	}
	i := sort.Search(len(n.booked), func(i int) bool { return n.booked[i].CreatedAt.After(b.CreatedAt) })
	n.booked = slices.Insert(n.booked, i, b)
	return nil
}

// Bookings returns the meetings booked that reach leadline up to until:
// the network stands in for a scheduling provider too.
func (n *Network) Bookings(ctx context.Context, until time.Time) ([]bookings.Booking, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.shared != nil {
		return n.shared.bookings(ctx, until)
	}
	i := sort.Search(len(n.booked), func(i int) bool { return n.booked[i].CreatedAt.After(until) })
	out := slices.Clone(n.booked[:i])
	n.booked = n.booked[i:]
	return out, nil
}

func (n *Network) queue(ctx context.Context, in senders.Inbound) error {
	in.At = in.At.Truncate(time.Microsecond)
	if n.shared != nil {
		return n.shared.queue(ctx, in)
	}
	i := sort.Search(len(n.pending), func(i int) bool { return n.pending[i].At.After(in.At) })
	n.pending = slices.Insert(n.pending, i, in)
	return nil
}

// providerID is the id of what the network made for the action under key:
// numbered in the order of the process's calls, or, when the network is
// shared, made from the key, the same in every process.
func (n *Network) providerID(prefix, key string) string {
	if n.shared != nil {
		return fmt.Sprintf("%s%d-%s", prefix, n.seed, hashID(key, prefix))
	}
	n.seq++
	return fmt.Sprintf("%s%d-%d", prefix, n.seed, n.seq)
}

// synced returns when what happened at t is reported: at the first sync
// at or after t.
func (n *Network) synced(t time.Time) time.Time {
	if n.rates.Sync <= 0 {
		return t
	}
	if s := t.Truncate(n.rates.Sync); !s.Equal(t) {
		return s.Add(n.rates.Sync)
	}
	return t
}

// chance returns a deterministic number in [0, 1) for the key and a salt.
func (n *Network) chance(key, salt string) float64 {
	h := sha256.Sum256(fmt.Appendf(nil, "%d|%s|%s", n.seed, key, salt))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / float64(1<<53)
}

// between returns a deterministic duration in [lo, hi), in whole seconds:
// every time the network reports is one a clock of microseconds can reach.
func (n *Network) between(key, salt string, lo, hi time.Duration) time.Duration {
	return (lo + time.Duration(n.chance(key, salt)*float64(hi-lo))).Truncate(time.Second)
}

func countKey(sender, day string, a senders.Action) string {
	return sender + "|" + day + "|" + string(a)
}

// Perform performs an action once per key.
func (n *Network) Perform(ctx context.Context, req senders.Request) (senders.Result, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, ok := n.results[req.Key]; ok {
		return r, nil
	}
	if n.shared != nil {
		if r, ok, err := n.shared.result(ctx, req.Key); err != nil || ok {
			return r, err
		}
	}
	if fs := n.failures[req.Sender.ID]; len(fs) > 0 {
		n.failures[req.Sender.ID] = fs[1:]
		if fs[0] != nil {
			return senders.Result{}, fs[0]
		}
	}
	at := n.clock.Now()
	cfg, known := n.configs[req.Sender.ID]
	if !known {
		cfg = *req.Sender
	}
	loc := cfg.Location()
	day := senders.LocalDate(at, loc)
	n.counts[countKey(cfg.ID, day, req.Action)]++
	used := n.counts[countKey(cfg.ID, day, req.Action)]
	week := 0
	if req.Action == senders.Invite {
		d, _ := time.Parse(time.DateOnly, day)
		for i := range 7 {
			week += n.counts[countKey(cfg.ID, d.AddDate(0, 0, -i).Format(time.DateOnly), senders.Invite)]
		}
	}
	if req.Action == senders.Invite && (used > realInvitesPerDay || week > realInvitesPerWeek) {
		return senders.Result{}, &senders.TransportError{Kind: senders.SenderLevel, Code: "restricted", Signal: senders.SignalRestricted,
			Message: "LinkedIn restricted the account: too many invitations."}
	}
	res := senders.Result{ProviderMessageID: n.providerID("sbx-", req.Key), At: at}
	if req.Action == senders.ProfileView {
		res.Profile = map[string]any{"name": req.Lead.Name, "public_identifier": req.Lead.PublicIdentifier, "source": "sandbox"}
	}
	if n.shared != nil {
		// Another process may have performed the key meanwhile: its
		// result stands.
		won, added, err := n.shared.claim(ctx, req.Key, res)
		if err != nil || !added {
			return won, err
		}
	} else {
		n.results[req.Key] = res
	}
	n.judge(cfg, req, at, day, used, week)
	n.performed = append(n.performed, Performed{Key: req.Key, SenderID: cfg.ID, LeadID: req.Lead.LeadID, Action: req.Action,
		Day: day, At: at, WithNote: req.Note != "", Purpose: req.Purpose, StepID: req.StepID, VariantID: req.VariantID})
	return res, n.outcomes(ctx, req, at)
}

// judge records every rule the action breaks, by the network's own counts
// and the configuration it was given.
func (n *Network) judge(cfg senders.Sender, req senders.Request, at time.Time, day string, used, week int) {
	add := func(rule, detail string) {
		n.violations = append(n.violations, Violation{Rule: rule, SenderID: cfg.ID, LeadID: req.Lead.LeadID, Action: req.Action, At: at, Detail: detail})
	}
	lim := min(cfg.Caps.Daily(req.Action), senders.Ceilings[req.Action])
	if used > lim {
		add("cap", fmt.Sprintf("%d %s on %s, cap %d", used, req.Action, day, lim))
	}
	if cfg.Warmup != nil && used > cfg.Warmup.Cap(day) {
		add("warmup", fmt.Sprintf("%d %s on %s, warm-up allows %d", used, req.Action, day, cfg.Warmup.Cap(day)))
	}
	if req.Action == senders.Invite && week > cfg.WeekCap() {
		add("weekly_invite_cap", fmt.Sprintf("%d invitations in the 7 days to %s, cap %d", week, day, cfg.WeekCap()))
	}
	// A member's reply in a conversation is a person answering a person:
	// working hours and reply-stop are rules of sequences, not of it.
	manual := req.Purpose == senders.PurposeReply
	if !manual && !cfg.Schedule.Open(at, cfg.Location()) {
		add("schedule", "outside the sender's working hours at "+at.In(cfg.Location()).Format(time.RFC3339))
	}
	// The guards: no action on a day off, none closer to the sender's
	// previous one than its spacing's minimum, no more emails in a local
	// hour than its hourly cap.
	if !manual && cfg.Holiday(day) {
		add("holiday", day+" is one of the sender's days off")
	}
	if !manual && req.Purpose != senders.PurposeEnrichment {
		lo, _ := cfg.SpacingOf()
		if prev, ok := n.last[cfg.ID]; ok && lo > 0 && at.Sub(prev) < lo {
			add("spacing", fmt.Sprintf("%s after the sender's previous action, spacing min %s", at.Sub(prev), lo))
		}
		n.last[cfg.ID] = at
	}
	if req.Action == senders.SendEmail && !manual {
		hour := at.In(cfg.Location()).Format("2006-01-02T15")
		n.counts[countKey(cfg.ID, hour, "email_hour")]++
		if c, limit := n.counts[countKey(cfg.ID, hour, "email_hour")], cfg.HourlyCapOf(); limit > 0 && c > limit {
			add("hourly_cap", fmt.Sprintf("%d emails in the local hour %s, hourly cap %d", c, hour, limit))
		}
	}
	if t, ok := n.dnc[req.Lead.LeadID]; ok && !at.Before(t) {
		add("do_not_contact", "the lead is do-not-contact since "+t.Format(time.RFC3339))
	}
	if n.blacklisted[req.Lead.LeadID] {
		add("blacklist", "the lead is blacklisted")
	}
	// A sequence's rule may enrol a lead after its reply (not_now: a
	// nurture sequence): the replies before that enrollment do not stop
	// it, a reply after it does.
	if req.Purpose != senders.PurposeEnrichment && !manual {
		for _, t := range n.replied[req.Lead.LeadID] {
			if at.After(t) && (req.RuleAt.IsZero() || t.After(req.RuleAt)) {
				add("reply_stop", "the lead replied; the reply was handed over at "+t.Format(time.RFC3339))
				break
			}
		}
	}
}

// outcomes queues what the outside world does after an action.
func (n *Network) outcomes(ctx context.Context, req senders.Request, at time.Time) error {
	lead := req.Lead.LeadID
	// Draws are keyed by who the person is (their name and identities, or
	// the lead's id when it has none), the action and how many such
	// actions they had before, not by the action's key, whose ids are new
	// in every run: one seed over the same leads draws the same
	// acceptances and replies.
	r := req.Lead
	who := strings.Join([]string{r.Name, r.Email, r.PublicIdentifier, r.LinkedInID, r.ProviderID}, "|")
	if who == "||||" {
		who = r.LeadID
	}
	who += "|" + string(req.Action)
	n.drawn[who]++
	key := fmt.Sprintf("%s|%d", who, n.drawn[who])
	base := senders.Inbound{SenderID: req.Sender.ID, LeadID: lead}
	o, scripted := n.scripts[lead]
	switch req.Action {
	case senders.Invite:
		n.invited[req.Sender.ID+"|"+lead] = at
		delete(n.withdrawn, req.Sender.ID+"|"+lead)
		accept := n.chance(key, "accept") < n.rateOf(req, "accept")
		after := n.between(key, "accept-after", 2*time.Hour, 4*24*time.Hour)
		if scripted {
			accept, after = o.Accept, o.AcceptAfter
		}
		if accept {
			in := base
			in.Kind, in.At = senders.InboundAccepted, n.synced(at.Add(after))
			return n.queue(ctx, in)
		}
	case senders.Message, senders.InMail, senders.SendEmail:
		if req.Action == senders.SendEmail {
			bounce := n.chance(key, "bounce") < n.rates.Bounce
			if scripted {
				bounce = o.Bounce
			}
			if bounce {
				in := base
				in.Kind, in.At, in.Message = senders.InboundBounce, n.synced(at.Add(n.between(key, "bounce-after", time.Minute, 10*time.Minute))), "550 5.1.1 mailbox unavailable"
				return n.queue(ctx, in)
			}
		}
		reply := n.chance(key, "reply") < n.rateOf(req, "reply")
		auto := n.chance(key, "auto") < n.rates.AutoReply
		after := n.between(key, "reply-after", time.Hour, 3*24*time.Hour)
		body := replyTexts[int(n.chance(key, "text")*float64(len(replyTexts)))]
		if scripted {
			reply, auto, after, body = o.Reply != "" || o.AutoReply, o.AutoReply, o.ReplyAfter, o.Reply
		}
		if !reply {
			return nil
		}
		in := base
		in.Kind, in.At, in.AutoReply = senders.InboundReply, n.synced(at.Add(after)), auto
		// Only an email answer has a subject: a LinkedIn reply (to a
		// message or an InMail) is a message in a conversation.
		subject := func(prefix string) string {
			if req.Action != senders.SendEmail || req.Subject == "" {
				return ""
			}
			return prefix + req.Subject
		}
		in.ProviderMessageID = n.providerID("sbx-in-", req.Key)
		if auto {
			o := outOfOffice[int(n.chance(key, "ooo")*float64(len(outOfOffice)))]
			back := in.At.AddDate(0, 0, 3+int(n.chance(key, "back")*10))
			in.Subject = subject(o.subject)
			in.Body = fmt.Sprintf(o.body, back.Day(), o.months[back.Month()-1])
			in.Headers = map[string]string{"Auto-Submitted": "auto-replied"}
		} else {
			in.Subject, in.Body = subject("Re: "), body
			// Who answers by proposing a meeting books one.
			if slices.Contains(bookers, body) {
				at := n.synced(in.At.Add(n.between(key, "book-after", time.Hour, 24*time.Hour)))
				if err := n.book(ctx, bookings.Booking{BookingID: "sbx-booking-" + strings.TrimPrefix(in.ProviderMessageID, "sbx-in-"), LeadID: &base.LeadID,
					SenderID: &base.SenderID, StartsAt: at.Add(72 * time.Hour).Truncate(time.Hour), CreatedAt: at}); err != nil {
					return err
				}
			}
		}
		return n.queue(ctx, in)
	}
	return nil
}

// Lookup returns the result of the action performed under req.Key.
func (n *Network) Lookup(ctx context.Context, req senders.Request) (senders.Result, bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.shared != nil {
		return n.shared.result(ctx, req.Key)
	}
	r, ok := n.results[req.Key]
	return r, ok, nil
}

// Inbound hands over, once each, the events due up to until. A reply a
// person wrote (not an auto-reply) handed over starts the lead's
// reply-stop in the network's judgement; replies are handed over without
// saying which they are.
func (n *Network) Inbound(ctx context.Context, until time.Time) ([]senders.Inbound, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []senders.Inbound
	if n.shared != nil {
		var err error
		if out, err = n.shared.take(ctx, until); err != nil {
			return nil, err
		}
	} else {
		i := sort.Search(len(n.pending), func(i int) bool { return n.pending[i].At.After(until) })
		out = slices.Clone(n.pending[:i])
		n.pending = n.pending[i:]
	}
	for k, in := range out {
		if in.Kind == senders.InboundAccepted {
			n.accepted[in.SenderID+"|"+in.LeadID] = true
		}
		if in.Kind == senders.InboundReply && !in.AutoReply {
			n.replied[in.LeadID] = append(n.replied[in.LeadID], until)
		}
		// AutoReply is the network's own knowledge of who wrote a reply.
		// Providers do not say it: the platform must tell from the
		// message, as it must with a real mailbox.
		out[k].AutoReply = false
	}
	return out, nil
}

// NextInbound returns when the next inbound event is due.
func (n *Network) NextInbound() (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.shared != nil {
		return n.shared.next(context.Background())
	}
	var next time.Time
	if len(n.pending) > 0 {
		next = n.pending[0].At
	}
	if len(n.booked) > 0 && (next.IsZero() || n.booked[0].CreatedAt.Before(next)) {
		next = n.booked[0].CreatedAt
	}
	return next, !next.IsZero()
}

// Violations returns every rule the network saw broken.
func (n *Network) Violations() []Violation {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.violations)
}

// Performed returns every action the network received, in order.
func (n *Network) Performed() []Performed {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.performed)
}

// outOfOffice are auto-replies in four languages, each naming the day the
// person is back.
var outOfOffice = []struct {
	subject, body string
	months        []string
}{
	{"Automatic reply: ", "I am out of the office until %d %s with limited access to email. I will reply when I am back.",
		[]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}},
	{"Abwesenheitsnotiz: ", "Vielen Dank für Ihre Nachricht. Ich bin bis zum %d. %s nicht im Büro und habe keinen Zugriff auf meine E-Mails.",
		[]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}},
	{"Réponse automatique : ", "Bonjour, je suis absente du bureau jusqu'au %d %s. Je traiterai votre message à mon retour.",
		[]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}},
	{"Respuesta automática: ", "Estoy fuera de la oficina hasta el %d de %s. Responderé a mi regreso.",
		[]string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"}},
}

// bookers are the replies that propose a meeting: the lead books one.
var bookers = []string{replyTexts[0], replyTexts[6], replyTexts[8], replyTexts[12]}

// replyTexts are replies in several intents and languages, for the
// simulation.
var replyTexts = []string{
	"Sounds interesting, happy to chat. How about Thursday afternoon?",
	"Thanks for reaching out. Can you send me some more details and pricing?",
	"Not right now, maybe check back next quarter.",
	"Not interested, please remove me from your list.",
	"I'm not the right person for this, you should talk to our head of engineering.",
	"Thanks!",
	"Yes, let's talk. Here is my calendar link.",
	"What does this cost for a team of 20?",
	"Klingt interessant, gerne können wir telefonieren. Passt Ihnen Donnerstag?",
	"Kein Interesse, danke.",
	"Pas pour le moment, recontactez-moi le trimestre prochain.",
	"Combien ça coûte pour une équipe de 10 personnes ?",
	"Me interesa, ¿podemos hablar el jueves por la tarde?",
	"No soy la persona adecuada, habla con nuestro director de ventas.",
	"Wrong person, sorry: please write to Maria Keller (maria.keller@northwind.test), she runs our platform team.",
}
