package apikit

import (
	"context"
	"fmt"
	"slices"
)

// Role is a member's or a key's role. Roles are ordered: every role can do
// what the roles below it can.
type Role string

// The roles, lowest first.
const (
	RoleClientViewer Role = "client_viewer"
	RoleMember       Role = "member"
	RoleManager      Role = "manager"
	RoleOwner        Role = "owner"
)

var roleRank = map[Role]int{RoleClientViewer: 1, RoleMember: 2, RoleManager: 3, RoleOwner: 4}

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// AtLeast reports whether r carries at least the rights of min.
func (r Role) AtLeast(min Role) bool { return roleRank[r] >= roleRank[min] && r.Valid() }

// MinRole returns the lower of two roles.
func MinRole(a, b Role) Role {
	if roleRank[a] <= roleRank[b] {
		return a
	}
	return b
}

// RateClass is the budget an operation counts against.
type RateClass string

// The rate classes. Spend calls also count as writes.
const (
	ClassRead  RateClass = "read"
	ClassWrite RateClass = "write"
	ClassSpend RateClass = "spend"
)

// Plans a workspace can be on. Webhooks need PlanPro.
const (
	PlanStarter = "starter"
	PlanPro     = "pro"
)

// Principal is who makes a request: the workspace, the key, the member who
// created the key, the effective role and the client scope.
type Principal struct {
	WorkspaceID   string
	WorkspaceName string
	Timezone      string
	Plan          string
	KeyID         string
	MemberID      string
	MemberEmail   string
	// Role is the effective role: the lower of the key's role and its
	// creator's current role.
	Role Role
	// ClientIDs is the client scope; empty means the whole workspace. A
	// key's is its own clients that its creator still sees.
	ClientIDs []string
}

// Scoped reports whether the principal is limited to some clients.
func (p Principal) Scoped() bool { return len(p.ClientIDs) > 0 }

// SeesClient reports whether a record of clientID is visible to the
// principal. A scoped principal sees only records of its clients; records
// with no client belong to the workspace and are not visible to it.
func (p Principal) SeesClient(clientID string) bool {
	if !p.Scoped() {
		return true
	}
	return clientID != "" && slices.Contains(p.ClientIDs, clientID)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal carried by ctx.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// CheckAssignee refuses an assignee who is not an active member of the
// workspace (nil, which unassigns, always passes): the one rule of every
// assignee route, threads' and tasks'. what names the thing assigned
// ("thread", "task") in the remedy; isMember answers for the workspace.
func CheckAssignee(ctx context.Context, isMember func(ctx context.Context, workspaceID, memberID string) (bool, error),
	workspaceID string, assigneeID *string, what string) error {
	if assigneeID == nil {
		return nil
	}
	ok, err := isMember(ctx, workspaceID, *assigneeID)
	if err != nil {
		return err
	}
	if !ok {
		return Invalid(fmt.Sprintf("assignee_id %s is not an active member of this workspace.", *assigneeID),
			"Assign the "+what+" to a member of the workspace, or send null to unassign it.")
	}
	return nil
}
