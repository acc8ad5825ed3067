package leads

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/workspace"
)

// BatchOptions are what a Batch does besides the create-or-update rule.
type BatchOptions struct {
	// TagIDs tag every lead a row creates or updates (1 to 20 tags, each
	// once), as AddTags does.
	TagIDs []string
	// DryRun writes nothing: every call runs in a transaction that is
	// rolled back, and what earlier calls would have written is kept in
	// memory, so that the counts are those a real run gives.
	DryRun bool
}

// Outcome is what a batch did with one input.
type Outcome string

// The outcomes of one input.
const (
	Created   Outcome = "created"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
	Rejected  Outcome = "rejected"
)

// BatchResult is the outcome of one input of a batch.
type BatchResult struct {
	LeadID          string
	Outcome         Outcome
	UnchangedFields []string
	// Err is why the input was rejected: an *apikit.Error, as Upsert
	// would have answered it.
	Err error
}

// Batch runs Upsert's create-or-update rule for many inputs: each call of
// Batch.Upsert is one transaction. The rule is the same code as Upsert's
// (upsertLead, create, update, tagLead); only where it reads and writes
// differs: the leads, do-not-contact entries and blacklist entries the
// inputs can match are read with a few queries per call, the rule runs
// against them in memory, and what it writes goes out in bulk statements
// before the commit. A rejected input changes nothing; the others go on.
type Batch struct {
	s      *Service
	p      apikit.Principal
	tags   []workspace.Named
	dryRun bool
	view   *batchView // kept across calls on a dry run
}

// NewBatch starts a batch for p. Returns E_PAYLOAD_INVALID or E_TOO_MANY
// for bad tags, as AddTags does.
func (s *Service) NewBatch(ctx context.Context, p apikit.Principal, opt BatchOptions) (*Batch, error) {
	b := &Batch{s: s, p: p, dryRun: opt.DryRun}
	if len(opt.TagIDs) > 0 {
		if err := checkTagIDs(opt.TagIDs); err != nil {
			return nil, err
		}
		known, err := s.knownTags(ctx, p, opt.TagIDs)
		if err != nil {
			return nil, err
		}
		b.tags = known
	}
	return b, nil
}

// errDryRun rolls a dry run's transaction back.
var errDryRun = errors.New("dry run: roll back")

// Upsert creates or updates a lead for each input, in one transaction, and
// returns one result per input, in order. An input the rules refuse is
// Rejected with the error Upsert would give; an error of the database
// fails the whole call and writes nothing.
func (b *Batch) Upsert(ctx context.Context, ins []LeadInput) ([]BatchResult, error) {
	rows := make([]Prepared, len(ins))
	for i, in := range ins {
		rows[i] = Prepare(in)
	}
	return b.UpsertPrepared(ctx, rows)
}

// Prepared is an input normalized and checked as Upsert does first, or
// why it cannot be: what a reader can do for the next rows while a batch
// writes the last ones.
type Prepared struct {
	in  LeadInput
	err error
}

// Prepare normalizes in and checks that it names someone to match.
func Prepare(in LeadInput) Prepared {
	in, err := prepare(in)
	return Prepared{in: in, err: err}
}

// UpsertPrepared is Upsert for inputs already prepared.
func (b *Batch) UpsertPrepared(ctx context.Context, rows []Prepared) ([]BatchResult, error) {
	out := make([]BatchResult, len(rows))
	prepared := make([]LeadInput, 0, len(rows))
	at := make([]int, 0, len(rows))
	for i, r := range rows {
		if r.err != nil {
			out[i] = BatchResult{Outcome: Rejected, Err: r.err}
			continue
		}
		prepared = append(prepared, r.in)
		at = append(at, i)
	}
	if len(prepared) == 0 {
		return out, nil
	}
	var kept *batchView
	err := b.s.db.InTx(ctx, func(ctx context.Context) error {
		// A dry run keeps what its earlier calls would have written; a
		// call that fails ends the run, so the view need not be restored.
		v := b.view
		if v == nil {
			v = newBatchView(b.s)
		}
		v.store.insertOrder, v.store.updateOrder, v.store.newTags, v.log.queued = nil, nil, nil, nil
		if err := v.prefetch(ctx, b.p, prepared, b.tags); err != nil {
			return err
		}
		s := v.service()
		for j, in := range prepared {
			r, err := b.one(ctx, s, in)
			if err != nil {
				var ae *apikit.Error
				if !errors.As(err, &ae) {
					return err
				}
				r = BatchResult{Outcome: Rejected, Err: err}
			}
			out[at[j]] = r
		}
		if b.dryRun {
			kept = v
			return errDryRun
		}
		return v.flush(ctx)
	})
	if errors.Is(err, errDryRun) {
		b.view = kept
		err = nil
	}
	if err != nil && db.IsUniqueViolation(err) {
		// Another writer took one of these identities since they were read:
		// one input at a time, the one that collides is the only one refused.
		if len(rows) == 1 {
			out[0] = BatchResult{Outcome: Rejected, Err: db.Conflict(err, "Another lead already holds one of these identifiers.",
				"Look the lead up with GET /v1/leads?email=… or public_identifier=…, and update that one.")}
			return out, nil
		}
		for i := range rows {
			r, err := b.UpsertPrepared(ctx, rows[i:i+1])
			if err != nil {
				return nil, err
			}
			out[i] = r[0]
		}
		return out, nil
	}
	return out, err
}

// one runs the rule for one prepared input on the batch's service.
func (b *Batch) one(ctx context.Context, s *Service, in LeadInput) (BatchResult, error) {
	if err := s.checkRefs(ctx, b.p, &in); err != nil {
		return BatchResult{}, err
	}
	u, err := s.upsertLead(ctx, b.p, in)
	if err != nil {
		return BatchResult{}, err
	}
	added := 0
	if len(b.tags) > 0 {
		if added, err = s.tagLead(ctx, b.p.WorkspaceID, u.lead.ID, b.tags); err != nil {
			return BatchResult{}, err
		}
	}
	r := BatchResult{LeadID: u.lead.ID, Outcome: Unchanged, UnchangedFields: u.unchanged}
	switch {
	case u.created:
		r.Outcome = Created
	case u.changed || added > 0:
		r.Outcome = Updated
	}
	return r, nil
}

// batchView is what one batch call reads and writes: the leads store,
// catalog and event log the rule runs on.
type batchView struct {
	real    *Service
	store   *batchStore
	catalog *batchCatalog
	log     *batchLog
}

func newBatchView(s *Service) *batchView {
	return &batchView{real: s,
		store: &batchStore{Store: s.store, leads: map[string]*Lead{}, index: map[matchKey]map[string]string{},
			looked: map[matchKey]map[string]bool{}, inserted: map[string]bool{}, updated: map[string]bool{}, changedCols: map[string][]string{},
			suppressed: map[string]map[string]bool{}, suppLooked: map[string]map[string]bool{},
			tagged: map[string]map[string]bool{}, tagsKnown: map[string]bool{}},
		catalog: &batchCatalog{Catalog: s.catalog, lookups: map[string][]workspace.Named{}, blacklist: map[string]string{}},
		log:     &batchLog{EventLog: s.log},
	}
}

// service is the leads service with its reads and writes going to v.
func (v *batchView) service() *Service {
	s := *v.real
	s.store, s.catalog, s.log = v.store, v.catalog, v.log
	return &s
}

// matchKeys are the identities the batch reads ahead.
var matchKeys = []matchKey{keyLinkedInID, keyProviderID, keyEmailWork, keyEmailPersonal, keyPublicIdentifier}

// prefetch reads what the inputs can match: the leads holding any of their
// identities, their do-not-contact and blacklist entries, and the batch's
// tags on the leads found.
func (v *batchView) prefetch(ctx context.Context, p apikit.Principal, ins []LeadInput, tags []workspace.Named) error {
	st := v.store
	idb := v.real.db.IDB(ctx)
	// In matching order: an input whose lead was found by one identity
	// needs no read of another that the lead holds already (the rule reads
	// only identities that would change); what is not read ahead, the
	// store reads when the rule asks.
	found := make([]*Lead, len(ins))
	for _, k := range matchKeys {
		var values []string
		seen := map[string]bool{}
		for i := range ins {
			if k == keyPublicIdentifier && !slices.Contains(identityOf(&ins[i]), k) {
				continue // not unique: read only when it is the identity
			}
			if val := ins[i].value(k); val != nil {
				nv := st.norm(k, *val)
				if l := found[i]; l != nil {
					if have := leadValue(l, k); have != nil && st.norm(k, *have) == nv {
						continue
					}
				}
				if !seen[nv] && !st.looked[k][nv] {
					seen[nv] = true
					values = append(values, nv)
				}
			}
		}
		if len(values) > 0 {
			rows, err := v.real.leadsMatching(ctx, p.WorkspaceID, k, values)
			if err != nil {
				return err
			}
			for i := range rows {
				if st.leads[rows[i].ID] == nil {
					st.add(&rows[i])
				}
			}
		}
		for _, nv := range values {
			st.markLooked(k, nv)
		}
		for i := range ins {
			if found[i] != nil {
				continue
			}
			if val := ins[i].value(k); val != nil {
				if id, ok := st.index[k][st.norm(k, *val)]; ok {
					found[i] = st.leads[id]
				}
			}
		}
	}

	suppress := map[string][]string{}
	var people []workspace.Person
	for i := range ins {
		in := &ins[i]
		var emails []string
		for _, e := range []*string{in.EmailWork, in.EmailPersonal} {
			if e != nil {
				emails = append(emails, strings.ToLower(*e))
			}
		}
		suppress[SuppressEmail] = append(suppress[SuppressEmail], emails...)
		suppress[SuppressLinkedInID] = append(suppress[SuppressLinkedInID], nonNil(in.LinkedInID)...)
		suppress[SuppressPublicIdentifier] = append(suppress[SuppressPublicIdentifier], nonNil(in.PublicIdentifier)...)
		people = append(people, workspace.Person{Company: deref(in.Company), Emails: emails,
			LinkedIn: append(nonNil(in.LinkedInID), nonNil(in.PublicIdentifier)...)})
	}
	for kind, values := range suppress {
		var todo []string
		for _, val := range values {
			if !st.suppLooked[kind][val] {
				todo = append(todo, val)
			}
		}
		if len(todo) == 0 {
			continue
		}
		listed, err := v.real.suppressed(ctx, p.WorkspaceID, kind, todo)
		if err != nil {
			return err
		}
		for _, val := range todo {
			setNested(st.suppLooked, kind, val, true)
			if listed[val] {
				setNested(st.suppressed, kind, val, true)
			}
		}
	}

	if bh, ok := v.catalog.Catalog.(interface {
		BlacklistHits(ctx context.Context, workspaceID string, people []workspace.Person) ([]string, error)
	}); ok && len(people) > 0 {
		hits, err := bh.BlacklistHits(ctx, p.WorkspaceID, people)
		if err != nil {
			return err
		}
		for i, h := range hits {
			v.catalog.blacklist[blacklistKey(people[i].Company, people[i].Emails, people[i].LinkedIn)] = h
		}
	}

	if len(tags) > 0 {
		var leadIDs []string
		for id := range st.leads {
			if !st.tagsKnown[id] {
				leadIDs = append(leadIDs, id)
			}
		}
		tagIDs := make([]string, len(tags))
		for i, t := range tags {
			tagIDs[i] = t.ID
		}
		for start := 0; start < len(leadIDs); start += 500 {
			chunk := leadIDs[start:min(start+500, len(leadIDs))]
			var have []leadTag
			if err := idb.NewSelect().Model(&have).Column("lead_id", "tag_id").
				Where("lead_id IN (?) AND tag_id IN (?)", bun.In(chunk), bun.In(tagIDs)).Scan(ctx); err != nil && !db.IsNoRows(err) {
				return err
			}
			for _, lt := range have {
				setNested(st.tagged, lt.LeadID, lt.TagID, true)
			}
			for _, id := range chunk {
				st.tagsKnown[id] = true
			}
		}
	}
	return nil
}

func setNested[K comparable, V any](m map[K]map[string]V, k K, key string, v V) {
	if m[k] == nil {
		m[k] = map[string]V{}
	}
	m[k][key] = v
}

// changedColumns names the text fields and custom that differ between a
// and b, in the fields' order.
func changedColumns(a, b *Lead) []string {
	var out []string
	for _, f := range fields {
		x, y := *f.lead(a), *f.lead(b)
		if (x == nil) != (y == nil) || (x != nil && *x != *y) {
			out = append(out, f.name)
		}
	}
	if !reflect.DeepEqual(a.Custom, b.Custom) {
		out = append(out, "custom")
	}
	return out
}

// flush writes what the batch's rule wrote: new leads, changed leads, new
// tags, then the events (which the event log writes before the commit).
func (v *batchView) flush(ctx context.Context) error {
	st := v.store
	s := v.real
	inserted := make([]*Lead, len(st.insertOrder))
	for i, id := range st.insertOrder {
		inserted[i] = st.leads[id]
	}
	if err := s.insertLeads(ctx, inserted); err != nil {
		return err
	}
	// Leads are updated in groups by the columns that changed: SQLite
	// rewrites every index on a column an UPDATE sets, changed or not.
	groups := map[string][]*Lead{}
	var order []string
	for _, id := range st.updateOrder {
		key := strings.Join(st.changedCols[id], ",")
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], st.leads[id])
	}
	for _, key := range order {
		cols := []string{"updated_at"}
		if key != "" {
			cols = append(strings.Split(key, ","), "updated_at")
		}
		if err := s.updateLeads(ctx, cols, groups[key]); err != nil {
			return err
		}
	}
	if err := s.insertTags(ctx, st.newTags); err != nil {
		return err
	}
	return s.log.EmitMany(ctx, v.log.queued)
}

// batchStore is the leads Store a batch's rule runs on: the leads read
// ahead and written so far, by id and by identity; what it does not hold
// it reads from the real store.
type batchStore struct {
	Store
	leads map[string]*Lead
	// index finds a lead by identity (emails lower-case); looked says
	// which identities were read, so that a miss there is a miss.
	index  map[matchKey]map[string]string
	looked map[matchKey]map[string]bool

	inserted, updated        map[string]bool
	insertOrder, updateOrder []string
	changedCols              map[string][]string // per updated lead

	suppressed, suppLooked map[string]map[string]bool // kind -> value
	tagged                 map[string]map[string]bool // lead -> tag
	tagsKnown              map[string]bool            // leads whose batch tags are in tagged
	newTags                []leadTag
}

func (s *batchStore) norm(k matchKey, v string) string {
	if k == keyEmailWork || k == keyEmailPersonal {
		return strings.ToLower(v)
	}
	return v
}

func (s *batchStore) markLooked(k matchKey, v string) { setNested(s.looked, k, v, true) }

func leadValue(l *Lead, k matchKey) *string {
	switch k {
	case keyLinkedInID:
		return l.LinkedInID
	case keyProviderID:
		return l.ProviderID
	case keyEmailWork:
		return l.EmailWork
	case keyEmailPersonal:
		return l.EmailPersonal
	default:
		return l.PublicIdentifier
	}
}

// columnOrder is where a column stands among the fields (custom last).
func columnOrder(col string) int {
	for i, f := range fields {
		if f.name == col {
			return i
		}
	}
	return len(fields)
}

func copyLead(l *Lead) *Lead {
	c := *l
	c.Custom = maps.Clone(l.Custom)
	return &c
}

// add holds l and indexes its identities. A public identifier is not
// unique: the lead with the lowest id holds it, as FindBy reads it.
func (s *batchStore) add(l *Lead) {
	s.leads[l.ID] = l
	for _, k := range matchKeys {
		v := leadValue(l, k)
		if v == nil {
			continue
		}
		nv := s.norm(k, *v)
		if cur, ok := s.index[k][nv]; ok && cur != l.ID && (k != keyPublicIdentifier || cur < l.ID) {
			continue
		}
		setNested(s.index, k, nv, l.ID)
	}
}

func (s *batchStore) drop(l *Lead) {
	for _, k := range matchKeys {
		if v := leadValue(l, k); v != nil {
			nv := s.norm(k, *v)
			if s.index[k][nv] == l.ID {
				delete(s.index[k], nv)
			}
		}
	}
}

func (s *batchStore) FindBy(ctx context.Context, workspaceID string, key matchKey, value string) (*Lead, error) {
	nv := s.norm(key, value)
	if id, ok := s.index[key][nv]; ok {
		return copyLead(s.leads[id]), nil
	}
	if s.looked[key][nv] {
		return nil, sql.ErrNoRows
	}
	l, err := s.Store.FindBy(ctx, workspaceID, key, value)
	if err != nil {
		if db.IsNoRows(err) {
			s.markLooked(key, nv)
		}
		return nil, err
	}
	s.markLooked(key, nv)
	if cur, ok := s.leads[l.ID]; ok {
		// What the database holds is older than what the batch wrote.
		if v := leadValue(cur, key); v == nil || s.norm(key, *v) != nv {
			return nil, sql.ErrNoRows
		}
		return copyLead(cur), nil
	}
	s.add(l)
	return copyLead(l), nil
}

func (s *batchStore) Insert(_ context.Context, l *Lead) error {
	s.add(copyLead(l))
	s.inserted[l.ID] = true
	s.insertOrder = append(s.insertOrder, l.ID)
	s.tagsKnown[l.ID] = true
	return nil
}

func (s *batchStore) Update(_ context.Context, l *Lead) error {
	if old := s.leads[l.ID]; old != nil {
		s.drop(old)
		if !s.inserted[l.ID] {
			cols := s.changedCols[l.ID]
			for _, c := range changedColumns(old, l) {
				if !slices.Contains(cols, c) {
					cols = append(cols, c)
				}
			}
			slices.SortFunc(cols, func(a, b string) int { return columnOrder(a) - columnOrder(b) })
			s.changedCols[l.ID] = cols
		}
	}
	s.add(copyLead(l))
	// A lead inserted in this call is written once, as it ends.
	if !s.inserted[l.ID] && !s.updated[l.ID] {
		s.updated[l.ID] = true
		s.updateOrder = append(s.updateOrder, l.ID)
	}
	return nil
}

func (s *batchStore) SuppressionHit(ctx context.Context, workspaceID, kind string, values []string) (string, error) {
	for _, v := range values {
		if !s.suppLooked[kind][v] {
			return s.Store.SuppressionHit(ctx, workspaceID, kind, values)
		}
	}
	for _, v := range values {
		if s.suppressed[kind][v] {
			return v, nil
		}
	}
	return "", nil
}

func (s *batchStore) AddTag(ctx context.Context, leadID, tagID string, at time.Time) (bool, error) {
	if !s.tagsKnown[leadID] {
		tags, err := s.Store.Tags(ctx, leadID)
		if err != nil {
			return false, err
		}
		for _, t := range tags {
			setNested(s.tagged, leadID, t.ID, true)
		}
		s.tagsKnown[leadID] = true
	}
	if s.tagged[leadID][tagID] {
		return false, nil
	}
	setNested(s.tagged, leadID, tagID, true)
	s.newTags = append(s.newTags, leadTag{LeadID: leadID, TagID: tagID, CreatedAt: at})
	return true, nil
}

// batchCatalog answers the rule's workspace lookups from what the batch
// read ahead, or asks the real catalog once per question.
type batchCatalog struct {
	Catalog
	lookups   map[string][]workspace.Named
	blacklist map[string]string
}

func (c *batchCatalog) Lookup(ctx context.Context, workspaceID string, kind workspace.Kind, ids []string) ([]workspace.Named, error) {
	key := string(kind) + "|" + strings.Join(ids, ",")
	if got, ok := c.lookups[key]; ok {
		return got, nil
	}
	got, err := c.Catalog.Lookup(ctx, workspaceID, kind, ids)
	if err == nil {
		c.lookups[key] = got
	}
	return got, err
}

func blacklistKey(company string, emails, linkedin []string) string {
	return company + "\x00" + strings.Join(emails, "\x01") + "\x00" + strings.Join(linkedin, "\x01")
}

func (c *batchCatalog) BlacklistHit(ctx context.Context, workspaceID, company string, emails, linkedin []string) (string, error) {
	key := blacklistKey(company, emails, linkedin)
	if hit, ok := c.blacklist[key]; ok {
		return hit, nil
	}
	hit, err := c.Catalog.BlacklistHit(ctx, workspaceID, company, emails, linkedin)
	if err == nil {
		c.blacklist[key] = hit
	}
	return hit, err
}

// batchLog keeps the rule's events for the flush.
type batchLog struct {
	EventLog
	queued []events.Event
}

func (l *batchLog) EmitMany(_ context.Context, evs []events.Event) error {
	l.queued = append(l.queued, evs...)
	return nil
}
