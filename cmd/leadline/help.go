package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// helpRequest is --help (or -h) on a command: its usage is printed on
// standard output and the command exits 0.
type helpRequest struct {
	fs   *flag.FlagSet
	text string
}

func (h *helpRequest) Error() string { return "help requested" }

// commandHelp says what each command does, above its flags.
var commandHelp = map[string]string{
	"serve":            "Usage: leadline serve [flags]\n\nServes the /v1 API (docs at /v1/docs) and the console at /app/ and, unless --runner=false, runs the runner that sends due sequence steps, until interrupted;\nCtrl-C or SIGTERM stops both gracefully.",
	"migrate":          "Usage: leadline migrate [flags]\n\nApplies the database migrations that are not applied yet; safe when several replicas start at once.",
	"apply":            "Usage: leadline apply -f setup.yaml [flags]\n\nCreates or updates the workspaces the file describes (members, clients, stages, tags, lists, blacklist, senders, sequences).\nApplying the same file again changes nothing; nothing is ever deleted.",
	"keys create":      "Usage: leadline keys create --workspace NAME --member EMAIL --role ROLE [flags]\n\nCreates an API key acting as the member and prints it once; only its hash is kept.",
	"keys list":        "Usage: leadline keys list --workspace NAME [flags]\n\nLists the workspace's keys (never the secrets).",
	"keys revoke":      "Usage: leadline keys revoke --workspace NAME --key ID [flags]\n\nRevokes a key at once.",
	"members invite":   "Usage: leadline members invite --workspace NAME --email EMAIL --role ROLE [--client NAME]… [flags]\n\nPrints a one-time link, valid 24 hours, on the public URL: there the member sets a password for the console (/app/).\nA new email joins the workspace with the role; an existing member (who keeps their role) sets a new password.",
	"blacklist list":   "Usage: leadline blacklist list --workspace NAME [flags]\n\nLists the workspace's blacklist by kind and value, with when and by whom each entry was added, as the console's Settings › Blacklist does.",
	"blacklist add":    "Usage: leadline blacklist add --workspace NAME --kind company|domain|linkedin VALUE… [flags]\n\nAdds values to the workspace's blacklist, lower-cased (a domain without @, a LinkedIn profile URL as its identifier); a value listed already is left as it is.\nA bad value adds nothing. Leads that match are not contacted from the runner's next check on.",
	"blacklist remove": "Usage: leadline blacklist remove --workspace NAME ID… | --kind KIND VALUE… [flags]\n\nRemoves entries by id, or by kind and value. An unknown one removes nothing. Only later checks change: what the entry stopped stays stopped.",
	"version":          "Usage: leadline version\n\nPrints the module version and the VCS revision of this build.",
	"demo":             "Usage: leadline demo [flags]\n\nCreates (or refreshes) the demo workspace with leads, senders, sequences and two simulated weeks of activity, and prints a new key per role (earlier demo keys are revoked) and invite links to sign in to the console.",
	"work":             "Usage: leadline work [flags]\n\nRuns the runner alone (no API) until interrupted: it executes due sequence steps through each sender's transport. Run it beside `leadline serve --runner=false` to scale API and workers apart on one Postgres.",
	"simulate":         "Usage: leadline simulate -f setup.yaml [flags]\n\nApplies the file, generates synthetic leads, enrols them through the real preview and commit, activates the sequences and runs the real runner\non a simulated clock against the sandbox network. Prints actions per day and per sender, and an audit by the sandbox's own counts;\nexits non-zero when the audit finds a violation.\n--variant-rate STEP/VARIANT=reply:0.10,accept:0.40 (repeatable) answers one variant at its own rates: how many sends an A/B test needs, and the audit\nchecks that no enrollment got a losing variant after the win.",
	"events export":    "Usage: leadline events export --workspace NAME [flags]\n\nWrites the workspace's activity log as NDJSON, oldest first.",
	"reports rebuild":  "Usage: leadline reports rebuild --workspace NAME [flags]\n\nRecomputes the workspace's report rollups from its activity log, in one transaction.",
	"secrets rotate":   strings.TrimSuffix(secretsHelp, "\n"),
	"backup":           backupHelp,
	"healthcheck":      healthcheckHelp,
	"import":           strings.TrimSuffix(importHelp, "\n"),
}

const keysHelp = `Usage: leadline keys create|list|revoke [flags]

  create   create an API key acting as a member; it is shown once
  list     list a workspace's keys
  revoke   revoke a key

Run 'leadline keys COMMAND --help' for a command's flags.
`

func (h *helpRequest) print(w io.Writer) {
	if h.fs == nil {
		fmt.Fprint(w, h.text)
		return
	}
	fmt.Fprintf(w, "%s\n\nFlags:\n", commandHelp[h.fs.Name()])
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
}

// cmdVersion prints the module version and the revision it was built
// from, as the build recorded them.
func cmdVersion(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionLine())
	return nil
}

func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "leadline (unknown version: no build information)"
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	parts := []string{"leadline " + version}
	if rev := settings["vcs.revision"]; rev != "" {
		r := "revision " + rev
		if t := settings["vcs.time"]; t != "" {
			r += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			r += ", modified"
		}
		parts = append(parts, r)
	} else {
		parts = append(parts, "revision unknown (built without VCS information)")
	}
	parts = append(parts, info.GoVersion)
	return strings.Join(parts, ", ")
}
