package leads

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/workspace"
)

// Store is the persistence the leads service needs. BunStore serves it on
// SQLite and Postgres; every method joins the transaction in ctx.
type Store interface {
	Insert(ctx context.Context, l *Lead) error
	Update(ctx context.Context, l *Lead) error
	// ByID returns the workspace's lead with id. Returns sql.ErrNoRows if
	// the workspace has none (db.IsNoRows).
	ByID(ctx context.Context, workspaceID, id string) (*Lead, error)
	// ByIDs returns the workspace's leads among ids, unknown ids left out.
	ByIDs(ctx context.Context, workspaceID string, ids []string) ([]Lead, error)
	Names(ctx context.Context, workspaceID string, ids []string) (map[string]string, error)
	// FindBy returns the workspace's lead whose key field holds value
	// (emails case-insensitively). Returns sql.ErrNoRows if none does.
	FindBy(ctx context.Context, workspaceID string, key matchKey, value string) (*Lead, error)
	List(ctx context.Context, workspaceID string, scope []string, f Filter) ([]Lead, int, error)
	Tags(ctx context.Context, leadID string) ([]workspace.Named, error)
	AddTag(ctx context.Context, leadID, tagID string, at time.Time) (bool, error)
	RemoveTag(ctx context.Context, leadID, tagID string) (bool, error)
	InsertSuppression(ctx context.Context, s *suppression) (bool, error)
	SuppressionHit(ctx context.Context, workspaceID string, kind string, values []string) (string, error)
	SuppressMatching(ctx context.Context, workspaceID, kind string, values []string, reason string, at time.Time) ([]string, error)
	QueueEnrichment(ctx context.Context, r *enrichmentRequest) error
}

// matchKey is a lead field used to find an existing lead.
type matchKey string

const (
	keyLinkedInID       matchKey = "linkedin_id"
	keyProviderID       matchKey = "provider_id"
	keyEmailWork        matchKey = "email_work"
	keyEmailPersonal    matchKey = "email_personal"
	keyPublicIdentifier matchKey = "public_identifier"
)

type leadTag struct {
	bun.BaseModel `bun:"table:lead_tags"`

	LeadID    string    `bun:"lead_id,pk"`
	TagID     string    `bun:"tag_id,pk"`
	CreatedAt time.Time `bun:"created_at"`
}

// Suppression kinds: do-not-contact entries for people who may not be leads
// yet, and for leads by id.
const (
	SuppressEmail            = "email"
	SuppressLinkedInID       = "linkedin_id"
	SuppressPublicIdentifier = "public_identifier"
	SuppressLead             = "lead"
)

type suppression struct {
	bun.BaseModel `bun:"table:suppressions"`

	ID          string    `bun:"id,pk"`
	WorkspaceID string    `bun:"workspace_id"`
	Kind        string    `bun:"kind"`
	Value       string    `bun:"value"`
	Reason      *string   `bun:"reason"`
	MemberID    *string   `bun:"member_id"`
	CreatedAt   time.Time `bun:"created_at"`
}

type enrichmentRequest struct {
	bun.BaseModel `bun:"table:enrichment_requests,alias:er"`

	ID          string    `bun:"id,pk"`
	WorkspaceID string    `bun:"workspace_id"`
	LeadID      string    `bun:"lead_id"`
	WantPosts   bool      `bun:"want_posts"`
	Force       bool      `bun:"force"`
	Status      string    `bun:"status"`
	CreatedAt   time.Time `bun:"created_at"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

// BunStore is the Store on either engine.
type BunStore struct {
	db *db.DB
	// byIDs reads leads by id, which the runner does before every step.
	byIDs *db.InQuery
}

// NewBunStore returns the Store backed by d.
func NewBunStore(d *db.DB) *BunStore {
	// The ids lead: the workspace is a filter on what they find. On
	// Postgres it is compared as text, so that no plan walks the
	// workspace's index instead of looking the ids up, as one may do on a
	// table whose statistics are not yet gathered (a new database).
	inWorkspace := "l.workspace_id = ?"
	if d.Engine == db.Postgres {
		inWorkspace = "l.workspace_id::text = ?"
	}
	return &BunStore{db: d, byIDs: db.NewInQuery(func(marks string) string {
		return d.NewSelect().Model((*Lead)(nil)).Where(inWorkspace, bun.Safe("?")).Where("l.id IN (?)", bun.Safe(marks)).String()
	})}
}

func (s *BunStore) idb(ctx context.Context) bun.IDB { return s.db.IDB(ctx) }

func (s *BunStore) Insert(ctx context.Context, l *Lead) error {
	_, err := s.idb(ctx).NewInsert().Model(l).Exec(ctx)
	return err
}

func (s *BunStore) Update(ctx context.Context, l *Lead) error {
	_, err := s.idb(ctx).NewUpdate().Model(l).WherePK().Exec(ctx)
	return err
}

func (s *BunStore) ByID(ctx context.Context, workspaceID, id string) (*Lead, error) {
	l := new(Lead)
	err := s.idb(ctx).NewSelect().Model(l).Where("l.workspace_id = ? AND l.id = ?", workspaceID, id).Scan(ctx)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (s *BunStore) ByIDs(ctx context.Context, workspaceID string, ids []string) ([]Lead, error) {
	return db.SelectList[Lead](ctx, s.db, s.byIDs, []any{workspaceID}, ids)
}

// FindBy finds the workspace's lead whose key equals value; emails compare
// case-insensitively.
func (s *BunStore) FindBy(ctx context.Context, workspaceID string, key matchKey, value string) (*Lead, error) {
	l := new(Lead)
	q := s.idb(ctx).NewSelect().Model(l).Where("l.workspace_id = ?", workspaceID)
	switch key {
	case keyEmailWork, keyEmailPersonal:
		// The IS NOT NULL term lets both engines use the partial index on
		// lower(email): neither infers it from lower(email) = ?.
		q = q.Where("lower(l.?) = ? AND l.? IS NOT NULL", bun.Ident(string(key)), strings.ToLower(value), bun.Ident(string(key)))
	default:
		q = q.Where("l.? = ?", bun.Ident(string(key)), value)
	}
	if key == keyPublicIdentifier {
		// Not unique: the oldest lead wins, read in order from the
		// (workspace_id, public_identifier, id) index.
		q = q.OrderExpr("l.id")
	}
	if err := q.Limit(1).Scan(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func (s *BunStore) Tags(ctx context.Context, leadID string) ([]workspace.Named, error) {
	var out []workspace.Named
	err := s.idb(ctx).NewSelect().TableExpr("lead_tags AS lt").ColumnExpr("t.id, t.name").
		Join("JOIN "+workspace.NamedRows(workspace.Tags, "t")+" ON t.id = lt.tag_id").Where("lt.lead_id = ?", leadID).Order("t.name").Scan(ctx, &out)
	if out == nil {
		out = []workspace.Named{}
	}
	return out, err
}

func (s *BunStore) AddTag(ctx context.Context, leadID, tagID string, at time.Time) (bool, error) {
	return db.InsertIfAbsent(ctx, s.idb(ctx), &leadTag{LeadID: leadID, TagID: tagID, CreatedAt: at}, "lead_id, tag_id")
}

func (s *BunStore) RemoveTag(ctx context.Context, leadID, tagID string) (bool, error) {
	return db.Changed(s.idb(ctx).NewDelete().Model((*leadTag)(nil)).Where("lead_id = ? AND tag_id = ?", leadID, tagID).Exec(ctx))
}

func (s *BunStore) InsertSuppression(ctx context.Context, sp *suppression) (bool, error) {
	return db.InsertIfAbsent(ctx, s.idb(ctx), sp, "workspace_id, kind, value")
}

// SuppressionHit returns the first of values with a do-not-contact entry of
// kind, or "".
func (s *BunStore) SuppressionHit(ctx context.Context, workspaceID, kind string, values []string) (string, error) {
	return db.FirstListed(ctx, s.idb(ctx), "suppressions", workspaceID, kind, values)
}

// SuppressMatching marks do-not-contact every lead not yet marked whose
// field for kind is among values, and returns their ids.
func (s *BunStore) SuppressMatching(ctx context.Context, workspaceID, kind string, values []string, reason string, at time.Time) ([]string, error) {
	var ids []string
	for start := 0; start < len(values); start += 500 {
		chunk := values[start:min(start+500, len(values))]
		var cond string
		switch kind {
		case SuppressEmail:
			cond = "((lower(email_work) IN (?) AND email_work IS NOT NULL) OR (lower(email_personal) IN (?) AND email_personal IS NOT NULL))"
		case SuppressLinkedInID:
			cond = "linkedin_id IN (?)"
		case SuppressPublicIdentifier:
			cond = "public_identifier IN (?)"
		default:
			cond = "id IN (?)"
		}
		args := []any{bun.In(chunk)}
		if kind == SuppressEmail {
			args = append(args, bun.In(chunk))
		}
		var got []string
		err := s.idb(ctx).NewRaw(`UPDATE leads SET do_not_contact = ?, do_not_contact_at = ?, do_not_contact_reason = ?, updated_at = ?
			WHERE workspace_id = ? AND do_not_contact = ? AND `+cond+` RETURNING id`,
			append([]any{true, at, reason, at, workspaceID, false}, args...)...).Scan(ctx, &got)
		if err != nil && !db.IsNoRows(err) {
			return nil, err
		}
		ids = append(ids, got...)
	}
	return ids, nil
}

func (s *BunStore) QueueEnrichment(ctx context.Context, r *enrichmentRequest) error {
	_, err := s.idb(ctx).NewInsert().Model(r).
		On("CONFLICT (lead_id) WHERE status = 'queued' DO UPDATE").
		Set("want_posts = er.want_posts OR EXCLUDED.want_posts").
		Set("force = er.force OR EXCLUDED.force").
		Set("updated_at = EXCLUDED.updated_at").Exec(ctx)
	return err
}
