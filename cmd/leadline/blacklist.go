package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/workspace"
)

// `leadline blacklist list|add|remove`: the console's Settings › Blacklist
// on the command line, through the same workspace service. The command
// line acts for the operator: as the setup file, its entries name no
// member.

const blacklistHelp = `Usage: leadline blacklist list|add|remove [flags]

  list     list the workspace's blacklist: companies, email domains and
           LinkedIn identifiers that are never contacted
  add      add values of one kind: add --kind company|domain|linkedin VALUE…
  remove   remove entries: remove ID…, or remove --kind KIND VALUE…

Flags come before the values. Run 'leadline blacklist COMMAND --help' for a
command's flags.
`

func cmdBlacklist(ctx context.Context, args []string, stdout io.Writer) error {
	return runGroup(ctx, "blacklist", blacklistHelp, args, stdout,
		subcommand{"list", cmdBlacklistList}, subcommand{"add", cmdBlacklistAdd}, subcommand{"remove", cmdBlacklistRemove})
}

// parseWithArgs is parse for a command that takes arguments after its
// flags.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil, &helpRequest{fs: fs}
	} else if err != nil {
		return nil, usageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
	}
	return fs.Args(), nil
}

// operator is the principal the command line acts as on workspace name:
// the operator, an owner of the whole workspace who is no member.
func operator(ctx context.Context, dsn, name string) (func() error, apikit.Principal, *workspace.Service, error) {
	d, w, err := openWorkspace(ctx, dsn, name)
	if err != nil {
		return nil, apikit.Principal{}, nil, err
	}
	p := apikit.Principal{WorkspaceID: w.ID, WorkspaceName: w.Name, Timezone: w.Timezone, Role: apikit.RoleOwner}
	return d.Close, p, workspace.NewService(d, apikit.SystemClock{}), nil
}

func cmdBlacklistList(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("blacklist list")
	ws := fs.String("workspace", "", "workspace name")
	kind := fs.String("kind", "", "only entries of this kind: company, domain or linkedin")
	q := fs.String("q", "", "only entries whose value contains this text (any case)")
	asJSON := fs.Bool("json", false, "print the entries as a JSON array")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ws == "" {
		return usageError{"blacklist list: --workspace is required"}
	}
	closeDB, p, svc, err := operator(ctx, *dsn, *ws)
	if err != nil {
		return err
	}
	defer closeDB()
	all := []workspace.BlacklistEntry{}
	for {
		page, err := svc.ListBlacklist(ctx, p, workspace.BlacklistFilter{Kind: *kind, Q: *q, Limit: apikit.MaxLimit, Offset: len(all)})
		if err != nil {
			return err
		}
		all = append(all, page.Data...)
		if !page.HasMore || len(page.Data) == 0 {
			break
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(all)
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tVALUE\tADDED\tBY")
	for _, e := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.ID, e.Kind, e.Value, e.CreatedAt.UTC().Format(time.RFC3339), addedBy(e))
	}
	return tw.Flush()
}

// addedBy is who added an entry, as lists show it.
func addedBy(e workspace.BlacklistEntry) string {
	if e.MemberEmail != "" {
		return e.MemberEmail
	}
	return "setup file or command line"
}

func cmdBlacklistAdd(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("blacklist add")
	ws := fs.String("workspace", "", "workspace name")
	kind := fs.String("kind", "", "company, domain or linkedin")
	values, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	if *ws == "" || *kind == "" || len(values) == 0 {
		return usageError{"blacklist add: --workspace, --kind and at least one value are required"}
	}
	closeDB, p, svc, err := operator(ctx, *dsn, *ws)
	if err != nil {
		return err
	}
	defer closeDB()
	res, err := svc.AddBlacklist(ctx, p, *kind, values)
	if err != nil {
		return err
	}
	for _, e := range res.Added {
		fmt.Fprintf(stdout, "added %s %q (%s)\n", e.Kind, e.Value, e.ID)
	}
	for _, v := range res.AlreadyListed {
		fmt.Fprintf(stdout, "already listed: %s %q (unchanged)\n", *kind, v)
	}
	return nil
}

func cmdBlacklistRemove(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("blacklist remove")
	ws := fs.String("workspace", "", "workspace name")
	kind := fs.String("kind", "", "remove by value of this kind (company, domain or linkedin) instead of by id")
	names, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	if *ws == "" || len(names) == 0 {
		return usageError{"blacklist remove: --workspace and at least one id (or --kind and a value) are required"}
	}
	closeDB, p, svc, err := operator(ctx, *dsn, *ws)
	if err != nil {
		return err
	}
	defer closeDB()
	r := workspace.BlacklistRemoval{IDs: names}
	if *kind != "" {
		r = workspace.BlacklistRemoval{Kind: *kind, Values: names}
	}
	gone, err := svc.RemoveBlacklist(ctx, p, r)
	if err != nil {
		return err
	}
	for _, e := range gone {
		fmt.Fprintf(stdout, "removed %s %q (%s)\n", e.Kind, e.Value, e.ID)
	}
	return nil
}
