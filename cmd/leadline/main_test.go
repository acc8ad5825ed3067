package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const setupYAML = `workspaces:
  - name: acme
    timezone: Europe/Berlin
    plan: pro
    suspended: false
    members:
      - {email: owner@acme.test, role: owner}
      - {email: max@acme.test, role: member, active: true}
    clients: [Globex, Initech]
    stages: [New, Contacted, Qualified]
    tags: [vip, event-2026]
    lists: [Berlin CTOs]
    blacklist: {companies: [Umbrella], domains: [umbrella.test], linkedin: []}
    senders:
      - name: anna
        channel: linkedin
        client: Globex
        monthly_cost: 79
        schedule: {mon-fri: ["09:00-12:00", "13:00-17:30"], sat: ["10:00-12:00"]}
        caps: {invite: 25, invite_week: 120, profile_view: 80}
        warmup: {start: 2026-11-01, from: 5, step: 5}
      - {name: mail, channel: email, address: sales@acme.test, timezone: America/New_York}
`

func runCmd(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), args, &out, &out)
	return out.String(), err
}

func TestCommands(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "l.db")
	setup := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(setup, []byte(setupYAML), 0o600))

	out, err := runCmd("migrate", "--db", dbPath)
	is.NoErr(err)
	is.True(strings.Contains(out, "applied 0001_foundation.sql"))

	out, err = runCmd("apply", "--db", dbPath, "-f", setup)
	is.NoErr(err)
	is.True(strings.Contains(out, "workspace acme: created"))
	is.True(strings.Contains(out, "workspace acme: sender anna added (linkedin)"))
	is.True(strings.Contains(out, "workspace acme: sender mail added (email)"))
	out, err = runCmd("apply", "--db", dbPath, "-f", setup)
	is.NoErr(err)
	is.Equal(out, "no changes\n") // applying again changes nothing
	// A cap above the platform ceiling is refused, and nothing changes.
	over := filepath.Join(dir, "over.yaml")
	is.NoErr(os.WriteFile(over, []byte(strings.Replace(setupYAML, "invite: 25", "invite: 150", 1)), 0o600))
	_, err = runCmd("apply", "--db", dbPath, "-f", over)
	is.True(err != nil && strings.Contains(err.Error(), `Workspace "acme": Sender "anna": cap invite: 150 is above the platform ceiling of 100`))
	typo := filepath.Join(dir, "typo.yaml")
	is.NoErr(os.WriteFile(typo, []byte(strings.Replace(setupYAML, "monthly_cost", "monthly_costs", 1)), 0o600))
	_, err = runCmd("apply", "--db", dbPath, "-f", typo)
	is.True(err != nil && strings.Contains(err.Error(), "monthly_costs"))

	out, err = runCmd("keys", "create", "--db", dbPath, "--workspace", "acme", "--member", "owner@acme.test",
		"--role", "member", "--client", "Globex", "--expires", "2099-01-01", "--name", "zap", "--json")
	is.NoErr(err)
	var k struct{ ID, Key string }
	is.NoErr(json.Unmarshal([]byte(out), &k))
	is.True(strings.HasPrefix(k.Key, "ll_"))

	out, err = runCmd("keys", "list", "--db", dbPath, "--workspace", "acme")
	is.NoErr(err)
	is.True(strings.Contains(out, k.ID) && strings.Contains(out, "Globex") && strings.Contains(out, "active"))
	is.True(!strings.Contains(out, k.Key)) // the key is shown once

	_, err = runCmd("keys", "revoke", "--db", dbPath, "--workspace", "acme", "--key", k.ID)
	is.NoErr(err)
	out, err = runCmd("keys", "list", "--db", dbPath, "--workspace", "acme")
	is.NoErr(err)
	is.True(strings.Contains(out, "revoked"))

	_, err = runCmd("keys", "create", "--db", dbPath, "--workspace", "acme", "--member", "max@acme.test", "--role", "member")
	is.True(err != nil && strings.Contains(describe(err), "only owners and managers"))

	// Four simulated days of the sample setup: the audit passes, and the
	// activity log exports as NDJSON.
	sim := filepath.Join(dir, "sim.db")
	out, err = runCmd("simulate", "-f", "../../examples/setup.yaml", "--db", sim, "--days", "4", "--seed", "3", "--leads", "40", "--start", "2026-03-02")
	is.NoErr(err)
	is.True(strings.Contains(out, "0 violations."))
	is.True(strings.Contains(out, "Manager key of workspace agency (acting as owner@agency.test"))
	out, err = runCmd("events", "export", "--db", sim, "--workspace", "agency", "--since", "2026-03-03")
	is.NoErr(err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	is.True(len(lines) > 10)
	var ev map[string]any
	is.NoErr(json.Unmarshal([]byte(lines[0]), &ev))
	for _, f := range []string{"id", "at", "kind", "lead_id", "sender_id", "sequence_id", "enrollment_id", "step_id", "data"} {
		_, ok := ev[f]
		is.True(ok)
	}
	is.True(ev["at"].(string) >= "2026-03-03")
	_, err = runCmd("events", "export", "--db", sim, "--workspace", "nope")
	is.True(err != nil && strings.Contains(describe(err), "was not found"))
	out, err = runCmd("reports", "rebuild", "--db", sim, "--workspace", "agency")
	is.NoErr(err)
	is.True(strings.Contains(out, "Rebuilt the report rollups of agency from "))
	_, err = runCmd("reports", "rebuild", "--db", sim)
	is.True(errors.As(err, new(usageError)))

	// A variant's own rates: a bad value is refused before anything runs.
	_, err = runCmd("simulate", "-f", "../../examples/setup.yaml", "--db", sim, "--variant-rate", "invite/a=open:0.5")
	is.True(err != nil && strings.Contains(describe(err), "--variant-rate"))
	// A tick past five minutes would act too late to keep the senders'
	// plans: refused the same way.
	_, err = runCmd("simulate", "-f", "../../examples/setup.yaml", "--db", sim, "--tick", "10m")
	is.True(errors.As(err, new(usageError)) && strings.Contains(describe(err), "--tick"))

	var ue usageError
	for _, args := range [][]string{{}, {"nope"}, {"apply", "--db", dbPath}, {"keys", "create", "--db", dbPath}, {"serve", "--bogus"}, {"serve", "--rate-read", "0"},
		{"keys", "create", "--db", dbPath, "--workspace", "acme", "--member", "owner@acme.test", "--role", "member", "--expires", "soon"}} {
		_, err := runCmd(args...)
		is.True(errors.As(err, &ue)) // usage errors exit 2 with the usage text
	}
	_, err = runCmd("migrate", "--db", "postgres://nobody@127.0.0.1:1/none")
	is.True(err != nil && strings.Contains(err.Error(), "cannot open database"))

	// demo on a database with the setup applied, twice (sharedDemo; last,
	// so that the rest of this test runs while another test makes it).
	_, first, second := sharedDemo(t)
	is.True(strings.Contains(first, "300 leads"))
	is.True(strings.Contains(first, "Sequence Globex CTOs (active) sent "))
	is.True(!strings.Contains(second, "sent ")) // again: replaces its keys, keeps the history
}

// TestHelpVersionAndMistypedDatabases: every command prints its usage with
// --help and exits 0; version prints the build; a mistyped database is
// refused instead of silently created.
func TestHelpVersionAndMistypedDatabases(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, args := range [][]string{{"--help"}, {"help"}, {"serve", "--help"}, {"serve", "-h"}, {"migrate", "--help"}, {"apply", "-h"},
		{"demo", "--help"}, {"work", "--help"}, {"simulate", "-h"}, {"events", "--help"}, {"events", "export", "--help"}, {"reports", "--help"}, {"reports", "rebuild", "-h"}, {"keys", "--help"}, {"keys", "-h"}, {"keys", "create", "--help"}, {"keys", "list", "-h"}, {"keys", "revoke", "--help"},
		{"version", "--help"}} {
		out, err := runCmd(args...)
		is.NoErr(err)
		is.True(strings.Contains(out, "Usage") || strings.Contains(out, "leadline"))
		if len(args) > 1 && args[0] != "keys" || len(args) > 2 {
			is.True(strings.Contains(out, "Flags:") || args[0] == "version" || args[0] == "keys" || ((args[0] == "events" || args[0] == "reports") && len(args) == 2))
		}
	}
	out, err := runCmd("serve", "--help")
	is.NoErr(err)
	is.True(strings.Contains(out, "-rate-read") && strings.Contains(out, "-addr"))
	for _, cmd := range []string{"serve", "work"} {
		out, err := runCmd(cmd, "--help")
		is.NoErr(err)
		is.True(strings.Contains(out, "-workers") && strings.Contains(out, "-group") && strings.Contains(out, "-tick"))
		_, err = runCmd(cmd, "--db", filepath.Join(t.TempDir(), "w.db"), "--workers", "-1")
		is.True(err != nil && strings.Contains(describe(err), "--workers and --group 0 (the default) or more"))
	}

	out, err = runCmd("version")
	is.NoErr(err)
	is.True(strings.HasPrefix(out, "leadline ") && strings.Contains(out, "go1."))

	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	for _, args := range [][]string{
		{"keys", "list", "--db", missing, "--workspace", "acme"},
		{"keys", "create", "--db", missing, "--workspace", "acme", "--member", "o@acme.test", "--role", "member"},
		{"keys", "revoke", "--db", missing, "--workspace", "acme", "--key", "x"},
	} {
		_, err := runCmd(args...)
		is.True(err != nil && strings.Contains(describe(err), "does not exist"))
		_, statErr := os.Stat(missing)
		is.True(os.IsNotExist(statErr)) // nothing was created
	}
	_, err = runCmd("migrate", "--db", "mysql://root@127.0.0.1/leadline")
	is.True(err != nil && strings.Contains(err.Error(), "unsupported database"))

	// Not-found messages speak of the setup file and the command line.
	dbPath := filepath.Join(dir, "l.db")
	setup := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(setup, []byte(setupYAML), 0o600))
	_, err = runCmd("apply", "--db", dbPath, "-f", setup)
	is.NoErr(err)
	for _, args := range [][]string{
		{"keys", "list", "--db", dbPath, "--workspace", "nope"},
		{"keys", "create", "--db", dbPath, "--workspace", "acme", "--member", "ghost@acme.test", "--role", "member"},
		{"keys", "create", "--db", dbPath, "--workspace", "acme", "--member", "owner@acme.test", "--role", "member", "--client", "Nope"},
		{"keys", "revoke", "--db", dbPath, "--workspace", "acme", "--key", "0192f4c2-8a4e-7b1c-9d3e-5f6a7b8c9d0e"},
	} {
		_, err := runCmd(args...)
		is.True(err != nil)
		msg := describe(err)
		is.True(strings.Contains(msg, "was not found"))
		is.True(!strings.Contains(msg, "scope") && !strings.Contains(msg, "this key")) // no API wording
	}

	_, first, second := sharedDemo(t)
	is.True(strings.Contains(first, "ready with 300 leads") && !strings.Contains(first, "revoked"))
	is.True(strings.Contains(second, "The 4 demo keys of the earlier run were revoked"))
}
