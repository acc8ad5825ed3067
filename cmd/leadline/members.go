package main

import (
	"context"
	"fmt"
	"io"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/console"
	"github.com/leadline/leadline/workspace"
)

const membersHelp = `Usage: leadline members invite [flags]

  invite   print a one-time link (valid 24 hours) where a member sets a
           password for the console

Run 'leadline members invite --help' for its flags.
`

func cmdMembers(ctx context.Context, args []string, stdout io.Writer) error {
	return runGroup(ctx, "members", membersHelp, args, stdout, subcommand{"invite", cmdMembersInvite})
}

func cmdMembersInvite(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("members invite")
	ws := fs.String("workspace", "", "workspace name")
	email := fs.String("email", "", "the member's email")
	role := fs.String("role", "", "owner, manager, member or client_viewer")
	var clients multiFlag
	fs.Var(&clients, "client", "limit the member to this client (repeatable), as keys create --client does")
	public := publicURLFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ws == "" || *email == "" || *role == "" {
		return usageError{"members invite: --workspace, --email and --role are required"}
	}
	if err := checkPublicURL("members invite", *public); err != nil {
		return err
	}
	d, err := openExisting(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	inv, token, err := workspace.NewService(d, apikit.SystemClock{}).Invite(ctx, workspace.InviteInput{
		Workspace: *ws, Email: *email, Role: apikit.Role(*role), Clients: clients})
	if err != nil {
		return err
	}
	printInvite(stdout, inv, console.InviteLink(*public, token))
	return nil
}

// printInvite prints an invite's link and what it is for.
func printInvite(stdout io.Writer, inv *workspace.Invite, link string) {
	scope := ""
	if len(inv.ClientNames) > 0 {
		scope = fmt.Sprintf(", limited to %v", inv.ClientNames)
	}
	fmt.Fprintf(stdout, "Invite for %s (%s of %s%s), valid once until %s:\n\n  %s\n\n"+
		"Send the link to the member: they choose a password there and are signed in to the console.\n"+
		"The link is shown once; only its hash is kept.\n",
		inv.Email, inv.Role, inv.WorkspaceName, scope, inv.ExpiresAt.Format("2006-01-02 15:04 MST"), link)
}
