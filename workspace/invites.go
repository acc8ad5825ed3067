package workspace

// Invites: a manager invites an email to the workspace with a role; the
// invite link lets its holder set a password and sign in.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// InviteInput is what inviting a member takes.
type InviteInput struct {
	// Workspace is the workspace's name; By's workspace when By is set.
	Workspace string
	Email     string
	Role      apikit.Role
	// Clients are client names: the member sees only those clients, as a
	// key created with them does. None: the whole workspace.
	Clients []string
	// By is the member who invites from the console; nil for the command
	// line, which acts for the workspace's operator.
	By *apikit.Principal
}

func inviteNotValid() *apikit.Error {
	return &apikit.Error{Code: apikit.ENotFound, Message: "This invite link is not valid: it was used already, is older than 24 hours, or was not copied whole.",
		Remedy: "Ask a manager of the workspace for a new invite (`leadline members invite`, or Members in the console)."}
}

// Invite invites email to the workspace with role (and clients), or lets
// an existing member set a new password, and returns the invite and its
// one-time token, which is never stored: only its hash is. The invite is
// valid for 24 hours and once.
//
// An existing member keeps their role: the invite must carry it. A member
// who left rejoins when the invite is used. From the console (By set) the
// inviter must be a manager or owner, may invite up to their own role,
// and, when limited to some clients, only to those clients.
//
// Returns E_NOT_FOUND for an unknown workspace or client, E_FORBIDDEN for
// an inviter who may not invite so, E_PAYLOAD_INVALID for a bad email or
// role and E_CONFLICT for a role that is not the existing member's.
func (s *Service) Invite(ctx context.Context, in InviteInput) (*Invite, string, error) {
	if err := apikit.CheckText("", in); err != nil {
		return nil, "", err
	}
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if local, domain, ok := strings.Cut(email, "@"); !ok || local == "" || !strings.Contains(domain, ".") ||
		strings.ContainsAny(email, " \t<>,;\"") || len(email) > 254 {
		return nil, "", apikit.Invalid(fmt.Sprintf("%q is not an email address.", in.Email), "Type the member's email address, like name@company.com.")
	}
	if !in.Role.Valid() {
		return nil, "", apikit.Invalid(fmt.Sprintf("Unknown role %q.", in.Role), "Use owner, manager, member or client_viewer.")
	}
	var inv *Invite
	var token string
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, s.clock)
		var w *Workspace
		var err error
		if in.By != nil {
			w, err = s.WorkspaceByID(ctx, in.By.WorkspaceID)
		} else {
			w, err = s.ByName(ctx, in.Workspace)
		}
		if err != nil {
			return err
		}
		clientIDs, names, err := s.clientIDsByName(ctx, w, in.Clients)
		if err != nil {
			return err
		}
		if by := in.By; by != nil {
			if !by.Role.AtLeast(apikit.RoleManager) {
				return apikit.Forbidden(fmt.Sprintf("You are a %s; only owners and managers invite members.", by.Role),
					"Ask an owner or a manager of the workspace to invite them.")
			}
			if !by.Role.AtLeast(in.Role) {
				return apikit.Forbidden(fmt.Sprintf("A %s cannot invite someone as %s.", by.Role, in.Role),
					"Choose a role no higher than your own.")
			}
			if by.Scoped() && (len(clientIDs) == 0 || slices.ContainsFunc(clientIDs, func(c string) bool { return !by.SeesClient(c) })) {
				return apikit.Forbidden("You see only some clients; a member you invite must be limited to clients among yours.",
					"Choose one or more of your clients for the new member.")
			}
		}
		m, err := s.store.MemberByEmail(ctx, w.ID, email)
		switch {
		case db.IsNoRows(err):
		case err != nil:
			return err
		case m.Role != in.Role:
			return apikit.Conflict(fmt.Sprintf("%s is already a %s of workspace %q; an invite does not change a role.", m.Email, m.Role, w.Name),
				fmt.Sprintf("Invite them as %s to let them set a password; roles change in the setup file (`leadline apply`).", m.Role))
		}
		var hash string
		token, hash = newToken()
		inv = &Invite{ID: apikit.NewID(), WorkspaceID: w.ID, Email: email, Role: in.Role, ClientIDs: clientIDs, TokenHash: hash,
			CreatedAt: now, ExpiresAt: now.Add(InviteValid), WorkspaceName: w.Name, ClientNames: names}
		if inv.ClientIDs == nil {
			inv.ClientIDs = []string{}
		}
		if in.By != nil {
			inv.InvitedBy = &in.By.MemberID
		}
		return s.store.InsertInvite(ctx, inv)
	})
	if err != nil {
		return nil, "", err
	}
	return inv, token, nil
}

// clientIDsByName resolves client names of workspace w to ids, and
// returns the names sorted and without repeats.
// Returns E_NOT_FOUND for a name that is no client of w.
func (s *Service) clientIDsByName(ctx context.Context, w *Workspace, clients []string) (ids, names []string, err error) {
	names = slices.Compact(slices.Sorted(slices.Values(clients)))
	found, err := s.store.NamedByName(ctx, w.ID, Clients, names)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range names {
		i := slices.IndexFunc(found, func(f Named) bool { return f.Name == n })
		if i < 0 {
			return nil, nil, setupNotFound(fmt.Sprintf("Client %q of workspace %q", n, w.Name),
				"Use a client listed under the workspace's clients: in the setup file; names are case-sensitive.")
		}
		ids = append(ids, found[i].ID)
	}
	return ids, names, nil
}

// InviteByToken returns the invite with token, with its workspace's name
// and its clients' names, while it can be used.
// Returns E_NOT_FOUND for an unknown, used or expired invite.
func (s *Service) InviteByToken(ctx context.Context, token string) (*Invite, error) {
	inv, err := s.store.InviteByHash(ctx, hashSecret(token))
	if db.IsNoRows(err) || (err == nil && (inv.UsedAt != nil || !s.clock.Now().Before(inv.ExpiresAt))) {
		return nil, inviteNotValid()
	} else if err != nil {
		return nil, err
	}
	w, err := s.WorkspaceByID(ctx, inv.WorkspaceID)
	if err != nil {
		return nil, err
	}
	inv.WorkspaceName = w.Name
	clients, err := s.store.Named(ctx, w.ID, Clients, inv.ClientIDs)
	if err != nil {
		return nil, err
	}
	inv.ClientNames = []string{}
	for _, c := range clients {
		inv.ClientNames = append(inv.ClientNames, c.Name)
	}
	return inv, nil
}

// AcceptInvite uses the invite with token: it sets the member's password
// (creating the member, or letting one who left rejoin), gives the member
// the invite's clients, ends the member's other sessions and opens a new
// one, whose token it returns.
//
// Returns E_PAYLOAD_INVALID for a password that breaks the rules
// (newPassword), E_NOT_FOUND for an unknown, used or expired invite,
// E_CONFLICT when the member's role changed since the invite and
// E_RATE_LIMITED (ErrPasswordBusy) when the password gate is full.
func (s *Service) AcceptInvite(ctx context.Context, token, password string) (string, error) {
	password, err := newPassword(password)
	if err != nil {
		return "", err
	}
	leave, err := s.gate.Enter(ctx)
	if err != nil {
		return "", err
	}
	hash := hashPassword(password, s.passwordParams())
	leave()
	var session string
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		now := db.Now(ctx, s.clock)
		inv, err := s.store.UseInvite(ctx, hashSecret(token), now)
		if db.IsNoRows(err) {
			return inviteNotValid()
		} else if err != nil {
			return err
		}
		m, err := s.store.MemberByEmail(ctx, inv.WorkspaceID, inv.Email)
		switch {
		case db.IsNoRows(err):
			m = &Member{ID: apikit.NewID(), WorkspaceID: inv.WorkspaceID, Email: inv.Email, Role: inv.Role, Active: true, CreatedAt: now, UpdatedAt: now}
			if err := s.store.SaveMember(ctx, m, true); err != nil {
				return err
			}
		case err != nil:
			return err
		case m.Role != inv.Role:
			return apikit.Conflict(fmt.Sprintf("%s became a %s after this invite was made for a %s.", m.Email, m.Role, inv.Role),
				"Ask a manager for a new invite.")
		case !m.Active:
			m.Active, m.UpdatedAt = true, now
			if err := s.store.SaveMember(ctx, m, false); err != nil {
				return err
			}
		}
		if err := s.store.SetMemberClients(ctx, m.ID, inv.ClientIDs); err != nil {
			return err
		}
		if err := s.store.SetPassword(ctx, &MemberPassword{MemberID: m.ID, Hash: hash, UpdatedAt: now}); err != nil {
			return err
		}
		if err := s.store.DeleteSessions(ctx, m.ID, time.Time{}); err != nil {
			return err
		}
		session, err = s.openSession(ctx, m, now)
		return err
	})
	return session, err
}
