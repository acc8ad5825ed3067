package console

import "github.com/leadline/leadline/apikit"

// area is one entry of the console's menu: an area of leadline, the path
// of its first page and the role it needs (the API's role for reading it).
type area struct {
	Key, Label, Path string
	Role             apikit.Role
}

// areas is the menu, in order; each area registers its routes in
// console/<area>.go.
var areas = []area{
	{"leads", "Leads", "/leads", apikit.RoleClientViewer},
	{"sequences", "Sequences", "/sequences", apikit.RoleClientViewer},
	{"senders", "Senders", "/senders", apikit.RoleClientViewer},
	{"inbox", "Inbox", "/inbox", apikit.RoleClientViewer},
	{"tasks", "Tasks", "/tasks", apikit.RoleClientViewer},
	{"reports", "Reports", "/reports", apikit.RoleClientViewer},
	{"members", "Members", "/members", apikit.RoleManager},
	{"settings", "Settings", "/settings", apikit.RoleMember}, // a member: do-not-contact alone
}

// navLink is a menu entry as the layout shows it.
type navLink struct {
	Label, Path string
	Current     bool
}

// menu is the menu p sees, with current marked.
func menu(p apikit.Principal, current string) []navLink {
	var out []navLink
	for _, a := range areas {
		if p.Role.AtLeast(a.Role) {
			out = append(out, navLink{Label: a.Label, Path: a.Path, Current: a.Key == current})
		}
	}
	return out
}
