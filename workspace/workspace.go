// Package workspace holds workspaces and what they own that every other
// area refers to: members, clients, stages, tags, lists, the blacklist and
// API keys. It also authenticates keys, and members' console sessions
// (signin.go: passwords, invites, sessions), into an apikit.Principal.
package workspace

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/apikit"
)

// Workspace is one tenant: an agency or a sales team.
type Workspace struct {
	bun.BaseModel `bun:"table:workspaces"`

	ID        string    `bun:"id,pk"`
	Name      string    `bun:"name"`
	Timezone  string    `bun:"timezone"`
	Plan      string    `bun:"plan"`
	Suspended bool      `bun:"suspended"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// Member is a person in a workspace. A member who left is inactive; their
// keys stop working at once.
type Member struct {
	bun.BaseModel `bun:"table:members"`

	ID          string      `bun:"id,pk"`
	WorkspaceID string      `bun:"workspace_id"`
	Email       string      `bun:"email"`
	Role        apikit.Role `bun:"role"`
	Active      bool        `bun:"active"`
	CreatedAt   time.Time   `bun:"created_at"`
	UpdatedAt   time.Time   `bun:"updated_at"`
}

// Named is a client, stage, tag or list: an id and a name.
type Named struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Kind names one of the workspace's named catalogs.
type Kind string

// The named catalogs a workspace keeps.
const (
	Clients Kind = "clients"
	Stages  Kind = "stages"
	Tags    Kind = "tags"
	Lists   Kind = "lists"
)

// Kinds lists the catalogs in a stable order.
var Kinds = []Kind{Clients, Stages, Tags, Lists}

// namedRow is the row shape shared by the four catalog tables.
type namedRow struct {
	ID          string    `bun:"id,pk"`
	WorkspaceID string    `bun:"workspace_id"`
	Name        string    `bun:"name"`
	CreatedAt   time.Time `bun:"created_at"`
}

// Blacklist kinds: companies (matched by name, case-insensitively), email
// domains and LinkedIn identifiers (public identifier or member id).
const (
	BlacklistCompany  = "company"
	BlacklistDomain   = "domain"
	BlacklistLinkedIn = "linkedin"
)

// BlacklistEntry is one value on a workspace's blacklist of a kind,
// stored lower-case (BlacklistValue), with who added it.
type BlacklistEntry struct {
	bun.BaseModel `bun:"table:blacklist"`

	ID          string `bun:"id,pk" json:"id"`
	WorkspaceID string `bun:"workspace_id" json:"-"`
	Kind        string `bun:"kind" json:"kind"`
	Value       string `bun:"value" json:"value"`
	// MemberID is the member who added the entry in the console; empty
	// for the setup file and the command line.
	MemberID  string    `bun:"member_id,nullzero" json:"member_id,omitempty"`
	CreatedAt time.Time `bun:"created_at" json:"created_at"`

	// MemberEmail is the adding member's email, filled when listing.
	MemberEmail string `bun:"-" json:"member_email,omitempty"`
}

// Catalog is what a principal may see of the workspace's named things.
type Catalog struct {
	Clients []Named `json:"clients"`
	Stages  []Named `json:"stages"`
	Tags    []Named `json:"tags"`
	Lists   []Named `json:"lists"`
}
