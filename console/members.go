package console

import (
	"net/http"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/workspace"
)

// The members page: the workspace's members and an invite form, for
// owners and managers (the role that creates keys). `leadline members
// invite` does the same from the command line.
func (c *Console) routesMembers() {
	c.handle("GET /members", apikit.RoleManager, c.membersPage)
	c.handle("POST /members/invite", apikit.RoleManager, c.inviteMember)
}

type membersData struct {
	Members []workspace.MemberView
	Pending []workspace.Invite
	Clients []workspace.Named
	Roles   []apikit.Role
	// Form is what was typed, kept when the invite is refused.
	Form struct {
		Email, Role string
		Clients     []string
	}
	// Link is the invite link just made, shown once.
	Link    string
	Invited *workspace.Invite
}

func (c *Console) membersData(rq *Request) (*membersData, error) {
	ms, err := c.pl.Workspaces.MemberList(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	cat, err := c.pl.Workspaces.Catalog(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	pending, err := c.pl.Workspaces.PendingInvites(rq.Ctx, rq.P)
	if err != nil {
		return nil, err
	}
	d := &membersData{Members: ms, Pending: pending, Clients: cat.Clients}
	for _, r := range []apikit.Role{apikit.RoleClientViewer, apikit.RoleMember, apikit.RoleManager, apikit.RoleOwner} {
		if rq.P.Role.AtLeast(r) {
			d.Roles = append(d.Roles, r)
		}
	}
	d.Form.Role = string(apikit.RoleMember)
	return d, nil
}

func (c *Console) membersPage(rq *Request) error {
	d, err := c.membersData(rq)
	if err != nil {
		return err
	}
	return rq.Render(http.StatusOK, "members", page{Title: "Members", Nav: "members", Data: d})
}

func (c *Console) inviteMember(rq *Request) error {
	d, err := c.membersData(rq)
	if err != nil {
		return err
	}
	f := rq.R.PostForm
	d.Form.Email, d.Form.Role, d.Form.Clients = strings.TrimSpace(f.Get("email")), f.Get("role"), f["client"]
	inv, token, err := c.pl.Workspaces.Invite(rq.Ctx, workspace.InviteInput{Email: d.Form.Email, Role: apikit.Role(d.Form.Role),
		Clients: d.Form.Clients, By: &rq.P})
	if err != nil {
		return rq.Refuse(err, "members", page{Title: "Members", Nav: "members", Data: d})
	}
	d.Invited, d.Link = inv, c.inviteLink(rq, token)
	d.Pending = append([]workspace.Invite{*inv}, d.Pending...)
	d.Form.Email, d.Form.Clients = "", nil
	return rq.Render(http.StatusOK, "members", page{Title: "Members", Nav: "members", Data: d})
}

// inviteLink is the invite link of token: on the public URL when the
// console has one, else on the address the manager is using.
func (c *Console) inviteLink(rq *Request, token string) string {
	base := c.opts.PublicURL
	if base == "" {
		scheme := "https"
		if !c.secure(rq.R) {
			scheme = "http"
		}
		base = scheme + "://" + rq.R.Host
	}
	return base + c.prefix + "/invite/" + token
}
