package reports

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
)

// The event kinds the rollups count.
const (
	kindActionSent   = "action.sent"
	kindAccepted     = "invite.accepted"
	kindClassified   = "message.classified"
	kindBooked       = "meeting.booked"
	kindBounced      = "email.bounced"
	kindEnrolled     = "enrollment.created"
	kindLeadCreated  = "lead.created"
	kindFailed       = "enrollment.failed"
	kindReplied      = "enrollment.replied"
	metricAcceptedBy = "_invites.accepted_by_invite_day" // acceptances under the day of their invitation
)

// finishedKinds end an enrollment: enrollments.finished counts them.
var finishedKinds = []string{"enrollment.finished", "enrollment.exited", "enrollment.stopped", kindReplied}

// countedKinds are the kinds of event the rollups count.
var countedKinds = append([]string{kindActionSent, kindAccepted, kindClassified, kindBooked, kindBounced, kindEnrolled, kindLeadCreated, kindFailed},
	finishedKinds...)

// counted reports whether the rollups count events of kind.
func counted(kind string) bool { return slices.Contains(countedKinds, kind) }

// subject is what a rollup row counts for.
type subject struct{ client, sequence, sender string }

type dailyKey struct {
	workspace, grain, day string
	subject
	metric string
}

// The grains of report_daily. The sequence and sender grains are the
// subject grain without its senders or without its sequences (and without
// the step metrics): the lists per sequence and per sender read them.
const (
	grainSubject  = "subject"
	grainClient   = "client"
	grainSequence = "sequence"
	grainSender   = "sender"
)

// SenderSends is the client- and sequence-grain metric of a sender's
// actions for the client or sequence: what costs are split by when no
// sender is asked for.
func SenderSends(senderID string) string { return "sender:" + senderID + ":sends" }

// isSends reports whether metric counts one kind of action (sends.invite,
// …): the rollups keep those, and sends.total is their sum.
func isSends(metric string) bool { return strings.HasPrefix(metric, "sends.") }

// weekly is the grain of the week rows of grain g: the same counters
// summed per week (Monday to Sunday, under the Monday's date), which a
// report reads for the whole weeks of its period instead of their days.
// The client, sequence and sender grains have them, without SenderSends;
// the subject grain, read only for one sequence and sender at once, has
// none.
func weekly(g string) string { return g + "@week" }

// weekOf is the Monday of day's week.
func weekOf(day string) string {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7)).Format(time.DateOnly)
}

// count adds n to metric on day for s, at every grain, and to the week
// rows of its day's week. The client and sequence grains, which have no
// sender, keep each sender's actions per day as SenderSends: what costs
// are split by.
func (t *tally) count(workspace, day string, s subject, metric string, n int64) {
	t.daily[dailyKey{workspace, grainSubject, day, s, metric}] += n
	week := weekOf(day)
	for _, g := range [...]struct {
		grain string
		s     subject
	}{
		{grainClient, subject{client: s.client}},
		{grainSequence, subject{client: s.client, sequence: s.sequence}},
		{grainSender, subject{client: s.client, sender: s.sender}},
	} {
		t.daily[dailyKey{workspace, g.grain, day, g.s, metric}] += n
		t.daily[dailyKey{workspace, weekly(g.grain), week, g.s, metric}] += n
	}
	bySequence := subject{client: s.client, sequence: s.sequence}
	if isSends(metric) && s.sender != "" {
		t.daily[dailyKey{workspace, grainClient, day, subject{client: s.client}, SenderSends(s.sender)}] += n
		t.daily[dailyKey{workspace, grainSequence, day, bySequence, SenderSends(s.sender)}] += n
	}
}

// threadRow is a thread that got a reply: the day and subject its reply
// counts under, its intent now and its time to reply.
type threadRow struct {
	bun.BaseModel `bun:"table:report_threads"`

	ThreadID     string    `bun:"thread_id,pk"`
	WorkspaceID  string    `bun:"workspace_id"`
	Day          string    `bun:"day"`
	ClientID     string    `bun:"client_id"`
	SequenceID   string    `bun:"sequence_id"`
	SenderID     string    `bun:"sender_id"`
	LeadID       string    `bun:"lead_id"`
	Intent       string    `bun:"intent"`
	FirstReplyAt time.Time `bun:"first_reply_at"`
	TimeToReply  *int64    `bun:"time_to_reply"`

	enrollmentID string `bun:"-"`
}

// tally collects what a batch of events adds to the rollups; write puts it
// in the database, in the caller's transaction.
type tally struct {
	daily      map[dailyKey]int64
	classified []classified
	// enrollments tells a new reply thread when its enrollment first
	// contacted the lead.
	enrollments EnrollmentSource
}

type classified struct {
	e   events.Event
	day string
}

func newTally(es EnrollmentSource) *tally {
	return &tally{daily: map[dailyKey]int64{}, enrollments: es}
}

func subjectOf(e events.Event) subject {
	return subject{client: e.ClientID, sequence: e.SequenceID, sender: e.SenderID}
}

func str(v any) string { s, _ := v.(string); return s }

// add counts e, dated in the workspace's timezone loc.
func (t *tally) add(e events.Event, loc *time.Location) {
	s, day := subjectOf(e), dayOf(e.CreatedAt, loc)
	inc := func(metric string, day string, n int64) { t.count(e.WorkspaceID, day, s, metric, n) }
	step := func(metric string) {
		if e.SequenceID != "" && e.StepID != "" {
			t.daily[dailyKey{e.WorkspaceID, grainSubject, day, subject{client: e.ClientID, sequence: e.SequenceID}, StepMetric(e.StepID, metric)}]++
		}
	}
	switch e.Kind {
	case kindActionSent:
		action := str(e.Data["action"])
		inc("sends."+action, day, 1)
		step("sent")
		if e.Data["first_contact"] == true {
			inc("leads.contacted", day, 1)
		}
	case kindAccepted:
		inc("invites.accepted", day, 1)
		if at, ok := timeOf(e.Data["invited_at"]); ok {
			inc(metricAcceptedBy, dayOf(at, loc), 1)
		}
	case kindClassified:
		if str(e.Data["thread_id"]) != "" {
			t.classified = append(t.classified, classified{e, day})
		}
	case kindBooked:
		inc("meetings.booked", day, 1)
	case kindBounced:
		inc("emails.bounced", day, 1)
	case kindEnrolled:
		inc("enrollments.started", day, 1)
	case kindLeadCreated:
		inc("leads.created", day, 1)
	case kindFailed:
		step("failed")
	default:
		if slices.Contains(finishedKinds, e.Kind) {
			inc("enrollments.finished", day, 1)
			if e.Kind == kindReplied {
				step("replied")
			}
		}
	}
}

// timeOf reads a time kept in an event's data: a time.Time when the event
// is the one just written, an RFC 3339 string when read back.
func timeOf(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, true
	case string:
		at, err := time.Parse(time.RFC3339Nano, t)
		return at, err == nil
	}
	return time.Time{}, false
}

// write adds the tally to the rollups in ctx's transaction.
func (t *tally) write(ctx context.Context, d *db.DB, shard int) error {
	sts, err := t.statements(ctx, d, shard)
	if err != nil {
		return err
	}
	for _, st := range sts {
		if err := d.Exec(ctx, st.SQL, st.Prepared, st.Args...); err != nil {
			return err
		}
	}
	return nil
}

// statements writes the tally's reply threads in ctx's transaction and
// returns the statements that add its counters to report_daily.
func (t *tally) statements(ctx context.Context, d *db.DB, shard int) ([]events.Statement, error) {
	if err := t.writeThreads(ctx, d.IDB(ctx)); err != nil {
		return nil, err
	}
	return upsertDaily(t.daily, shard), nil
}

// StepMetric is the key under which report_daily counts what a sequence's
// step did: sent, replied or failed.
func StepMetric(stepID, what string) string { return "step:" + stepID + ":" + what }

// writeThreads counts replies and intents. A thread's first reply counts
// once, under its day and subject, with the thread's intent; a later
// intent moves the thread's count from the old intent to the new one.
func (t *tally) writeThreads(ctx context.Context, idb bun.IDB) error {
	if len(t.classified) == 0 {
		return nil
	}
	ids := make([]string, 0, len(t.classified))
	for _, c := range t.classified {
		ids = append(ids, str(c.e.Data["thread_id"]))
	}
	var rows []threadRow
	if err := idb.NewSelect().Model(&rows).Where("thread_id IN (?)", bun.In(slices.Compact(slices.Sorted(slices.Values(ids))))).Scan(ctx); err != nil {
		return err
	}
	known := map[string]*threadRow{}
	for i := range rows {
		known[rows[i].ThreadID] = &rows[i]
	}
	var added []*threadRow
	changed := map[string]*threadRow{}
	for _, c := range t.classified {
		e := c.e
		id, intent := str(e.Data["thread_id"]), str(e.Data["intent"])
		if intent == "" {
			continue
		}
		row := known[id]
		if row == nil {
			if str(e.Data["message_id"]) == "" {
				continue // an intent set on a thread with no reply yet
			}
			row = &threadRow{ThreadID: id, WorkspaceID: e.WorkspaceID, Day: c.day, ClientID: e.ClientID, SequenceID: e.SequenceID,
				SenderID: e.SenderID, LeadID: e.LeadID, Intent: intent, FirstReplyAt: e.CreatedAt, enrollmentID: e.EnrollmentID}
			known[id], added = row, append(added, row)
			t.count(row.WorkspaceID, row.Day, row.subject(), "replies", 1)
			t.count(row.WorkspaceID, row.Day, row.subject(), "intents."+intent, 1)
			continue
		}
		if row.Intent == intent {
			continue
		}
		t.count(row.WorkspaceID, row.Day, row.subject(), "intents."+row.Intent, -1)
		t.count(row.WorkspaceID, row.Day, row.subject(), "intents."+intent, 1)
		row.Intent = intent
		if !slices.Contains(added, row) {
			changed[id] = row
		}
	}
	if len(added) > 0 {
		if err := t.timesToReply(ctx, added); err != nil {
			return err
		}
		if _, err := idb.NewInsert().Model(&added).Exec(ctx); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(mapsKeys(changed)) {
		if _, err := idb.NewUpdate().Model(changed[id]).Column("intent").WherePK().Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (r *threadRow) subject() subject {
	return subject{client: r.ClientID, sequence: r.SequenceID, sender: r.SenderID}
}

// timesToReply sets each new reply thread's time from the moment its
// enrollment first contacted the lead.
func (t *tally) timesToReply(ctx context.Context, rows []*threadRow) error {
	var ids []string
	for _, r := range rows {
		if r.enrollmentID != "" {
			ids = append(ids, r.enrollmentID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	contacted, err := t.enrollments.ContactedAt(ctx, ids)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if at, ok := contacted[r.enrollmentID]; ok && !at.After(r.FirstReplyAt) {
			s := int64(r.FirstReplyAt.Sub(at) / time.Second)
			r.TimeToReply = &s
		}
	}
	return nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// upsertDaily returns the statements that add m to report_daily's
// counters. Rows of one statement are sorted, so that two transactions lock
// them in one order.
func upsertDaily(m map[dailyKey]int64, shard int) []events.Statement {
	keys := sortedDaily(m)
	var out []events.Statement
	for start := 0; start < len(keys); start += 400 {
		end := min(start+400, len(keys))
		var sb strings.Builder
		args := make([]any, 0, 9*(end-start))
		sb.WriteString(dailyHead)
		for i, k := range keys[start:end] {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, k.workspace, k.grain, k.day, k.client, k.sequence, k.sender, k.metric, shard, m[k])
		}
		sb.WriteString(dailyTail)
		// An event written alone adds a few rows: a statement that small
		// repeats and is prepared once per connection; a larger one is
		// parsed each time.
		out = append(out, events.Statement{SQL: sb.String(), Args: args, Prepared: end-start <= preparedRows})
	}
	return out
}

// writeDaily adds m to report_daily's counters in the transaction ctx
// carries, with bound multi-row statements prepared once per connection
// (db.ExecRows), whatever the number of rows: what a transaction's
// events added up, before its commit.
func writeDaily(ctx context.Context, d *db.DB, m map[dailyKey]int64, shard int) error {
	keys := sortedDaily(m)
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{k.workspace, k.grain, k.day, k.client, k.sequence, k.sender, k.metric, shard, m[k]}
	}
	return d.ExecRows(ctx, dailyHead, dailyTail, nil, rows)
}

// The head and tail of report_daily's upsert around its rows of values.
const (
	dailyKeyCols = "workspace_id, grain, day, client_id, sequence_id, sender_id, metric"
	dailyHead    = "INSERT INTO report_daily (" + dailyKeyCols + ", shard, value) VALUES "
	dailyTail    = " ON CONFLICT (" + dailyKeyCols + ", shard) DO UPDATE SET value = report_daily.value + excluded.value"
)

// sortedDaily returns m's keys with a value other than 0, sorted: rows
// written in one order, so that two transactions lock them in one order.
func sortedDaily(m map[dailyKey]int64) []dailyKey {
	keys := make([]dailyKey, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b dailyKey) int {
		return cmp.Or(cmp.Compare(a.workspace, b.workspace), cmp.Compare(a.grain, b.grain), cmp.Compare(a.day, b.day),
			cmp.Compare(a.client, b.client), cmp.Compare(a.sequence, b.sequence), cmp.Compare(a.sender, b.sender), cmp.Compare(a.metric, b.metric))
	})
	return keys
}

const preparedRows = 12

// Shards is how many rows of one counter concurrent transactions spread
// over on Postgres; SQLite has one writer and one shard.
const Shards = 4

// zones caches each workspace's timezone for the write path. A change of
// timezone dates events from the next minute on; `leadline reports
// rebuild` re-dates the earlier ones.
type zones struct {
	mu    sync.Mutex
	byWS  map[string]zone
	ttl   time.Duration
	clock func() time.Time
}

type zone struct {
	loc    *time.Location
	loaded time.Time
}

func (z *zones) get(ctx context.Context, ws WorkspaceSource, workspaceID string) (*time.Location, error) {
	now := z.clock()
	z.mu.Lock()
	c, ok := z.byWS[workspaceID]
	z.mu.Unlock()
	if ok && now.Sub(c.loaded) < z.ttl {
		return c.loc, nil
	}
	w, err := ws.WorkspaceByID(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(w.Timezone)
	if err != nil {
		return nil, err
	}
	z.mu.Lock()
	z.byWS[workspaceID] = zone{loc, now}
	z.mu.Unlock()
	return loc, nil
}

// count is the activity log's hook: it writes the reply threads of the
// counted events and, outside a transaction, returns the counters'
// upserts, which the log writes with the events (on Postgres, in the same
// statement); in one, it adds them to the transaction's counters, written
// before its commit.
func (svc *Service) count(ctx context.Context, evs []events.Event) ([]events.Statement, error) {
	t := newTally(svc.areas.Enrollments)
	for _, e := range evs {
		if !counted(e.Kind) || e.WorkspaceID == "" {
			continue
		}
		loc, err := svc.zones.get(ctx, svc.areas.Workspaces, e.WorkspaceID)
		if err != nil {
			return nil, err
		}
		t.add(e, loc)
	}
	if t.empty() {
		return nil, nil
	}
	memo := db.TxMemo(ctx)
	if memo == nil {
		return t.statements(ctx, svc.db, svc.shard())
	}
	// In a transaction the counters are added up and written last, before
	// its commit, once per counter row however many of its events count
	// there (an action counts at every grain and in its week: a runner's
	// group of actions shares most of those rows). On Postgres the
	// workspace's counter rows, which every concurrent writer shares, are
	// then also locked for the commit alone, not for the rest of the
	// transaction.
	if err := t.writeThreads(ctx, svc.db.IDB(ctx)); err != nil {
		return nil, err
	}
	v, _ := memo.LoadOrStore(dailyMemo, &pendingDaily{m: map[dailyKey]int64{}})
	pd := v.(*pendingDaily)
	pd.mu.Lock()
	for k, n := range t.daily {
		pd.m[k] += n
	}
	pd.mu.Unlock()
	db.BeforeCommit(ctx, dailyMemo, func(ctx context.Context) error {
		pd.mu.Lock()
		m := pd.m
		pd.m = map[dailyKey]int64{}
		pd.mu.Unlock()
		return writeDaily(ctx, svc.db, m, svc.shard())
	})
	return nil, nil
}

// shard is the counter shard a write adds to: one of Shards on Postgres,
// the one shard on SQLite, which has one writer.
func (svc *Service) shard() int {
	if svc.db.Engine == db.SQLite {
		return 0
	}
	return rand.IntN(Shards)
}

// dailyMemo keys a transaction's counters that wait for its commit.
const dailyMemo = "reports:daily"

// pendingDaily are the counters a transaction has yet to write.
type pendingDaily struct {
	mu sync.Mutex
	m  map[dailyKey]int64
}

func (t *tally) empty() bool {
	return len(t.daily) == 0 && len(t.classified) == 0
}

func dayOf(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }
