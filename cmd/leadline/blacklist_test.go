package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/workspace"
)

// TestBlacklist: list, add and remove as the console's Settings ›
// Blacklist does, through the same service: values normalised, a repeat
// reported, a bad value or an unknown entry changing nothing, removal by
// id and by value, and help and usage mistakes.
func TestBlacklist(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "l.db")
	setup := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(setup, []byte(setupYAML), 0o600))
	_, err := runCmd("apply", "--db", dbPath, "-f", setup)
	is.NoErr(err)
	list := func(args ...string) []workspace.BlacklistEntry {
		t.Helper()
		out, err := runCmd(append([]string{"blacklist", "list", "--db", dbPath, "--workspace", "acme", "--json"}, args...)...)
		is.NoErr(err)
		var es []workspace.BlacklistEntry
		is.NoErr(json.Unmarshal([]byte(out), &es))
		return es
	}
	values := func(es []workspace.BlacklistEntry) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.Kind+":"+e.Value)
		}
		return out
	}
	is.Equal(values(list()), []string{"company:umbrella", "domain:umbrella.test"}) // from the setup file

	out, err := runCmd("blacklist", "add", "--db", dbPath, "--workspace", "acme", "--kind", "domain", "@Globex.example", "umbrella.test")
	is.NoErr(err)
	is.True(strings.Contains(out, `added domain "globex.example" (`))
	is.True(strings.Contains(out, `already listed: domain "umbrella.test" (unchanged)`))
	_, err = runCmd("blacklist", "add", "--db", dbPath, "--workspace", "acme", "--kind", "linkedin", "https://www.linkedin.com/in/Jane-Doe/")
	is.NoErr(err)
	// A bad value adds nothing, and says what to do.
	_, err = runCmd("blacklist", "add", "--db", dbPath, "--workspace", "acme", "--kind", "domain", "hooli.example", "ann@hooli.example")
	is.True(err != nil && strings.Contains(describe(err), `"ann@hooli.example" is not a domain.`) && strings.Contains(describe(err), "such as example.com"))
	_, err = runCmd("blacklist", "add", "--db", dbPath, "--workspace", "acme", "--kind", "phone", "1")
	is.True(err != nil && strings.Contains(describe(err), "Use company, domain or linkedin."))

	es := list()
	is.Equal(values(es), []string{"company:umbrella", "domain:globex.example", "domain:umbrella.test", "linkedin:jane-doe"})
	is.Equal(values(list("--kind", "domain", "--q", "GLOBEX")), []string{"domain:globex.example"})
	out, err = runCmd("blacklist", "list", "--db", dbPath, "--workspace", "acme")
	is.NoErr(err)
	is.True(strings.Contains(out, "ID") && strings.Contains(out, "jane-doe") && strings.Contains(out, "setup file or command line"))

	// Remove: an unknown id removes nothing; by id; by kind and value.
	_, err = runCmd("blacklist", "remove", "--db", dbPath, "--workspace", "acme", es[1].ID, "nope")
	is.True(err != nil && strings.Contains(describe(err), "Not on the blacklist: nope. Nothing was removed."))
	out, err = runCmd("blacklist", "remove", "--db", dbPath, "--workspace", "acme", es[1].ID)
	is.NoErr(err)
	is.True(strings.Contains(out, `removed domain "globex.example"`))
	out, err = runCmd("blacklist", "remove", "--db", dbPath, "--workspace", "acme", "--kind", "linkedin", "Jane-Doe")
	is.NoErr(err)
	is.True(strings.Contains(out, `removed linkedin "jane-doe"`))
	is.Equal(values(list()), []string{"company:umbrella", "domain:umbrella.test"})

	// Usage mistakes exit 2; help exits 0.
	var ue usageError
	for _, args := range [][]string{{"blacklist"}, {"blacklist", "drop"}, {"blacklist", "add", "--db", dbPath, "--workspace", "acme", "--kind", "company"},
		{"blacklist", "remove", "--db", dbPath, "--workspace", "acme"}, {"blacklist", "list", "--db", dbPath}} {
		_, err := runCmd(args...)
		is.True(errors.As(err, &ue))
	}
	_, err = runCmd("blacklist", "list", "--db", dbPath, "--workspace", "nope")
	is.True(err != nil && strings.Contains(describe(err), `Workspace "nope" was not found.`))
	for _, args := range [][]string{{"blacklist", "--help"}, {"blacklist", "list", "--help"}, {"blacklist", "add", "-h"}, {"blacklist", "remove", "--help"}} {
		out, err := runCmd(args...)
		is.NoErr(err)
		is.True(strings.Contains(out, "Usage: leadline blacklist"))
	}
}
