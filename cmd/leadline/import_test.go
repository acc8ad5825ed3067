package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
)

func TestImportCommand(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(string(e), func(t *testing.T) { testImportCommand(t, e) })
	}
}

func testImportCommand(t *testing.T, e db.Engine) {
	is := is.New(t)
	dir := t.TempDir()
	dsn := dbtest.NewDSN(t, e)
	setup := filepath.Join(dir, "setup.yaml")
	is.NoErr(os.WriteFile(setup, []byte(setupYAML), 0o600))
	_, err := runCmd("apply", "--db", dsn, "-f", setup)
	is.NoErr(err)

	file := filepath.Join(dir, "leads.csv")
	csv := "\ufeffFull Name\tWork Email\tLinkedIn URL\tJob Title\tNotes\tFax\n" +
		"Ann Lee\tann@acme.test\thttps://www.linkedin.com/in/ann-lee\tCTO\t\"met at\nthe fair\"\t1\n" +
		"Bob\tbob@acme.test\t\tCEO\t\t\n" +
		"Bad\tnot-an-email\t\t\t\t\n" +
		"Cy\tcy@umbrella.test\t\t\t\t\n"
	is.NoErr(os.WriteFile(file, []byte(csv), 0o600))

	args := []string{"import", file, "--db", dsn, "--workspace", "acme", "--client", "globex", "--tag", "vip",
		"--map", "Notes=custom.notes"}
	out, err := runCmd(append(args, "--dry-run")...)
	is.NoErr(err)
	is.True(strings.Contains(out, "dry run: would import 4 rows"))
	is.True(strings.Contains(out, "3 created, 0 updated, 0 unchanged, 1 rejected"))
	is.True(strings.Contains(out, "line 5: email_work \"not-an-email\" is not an email address."))
	is.True(strings.Contains(out, `columns left out: "Fax"`))

	out, err = runCmd(args...)
	is.NoErr(err)
	is.True(strings.Contains(out, "imported 4 rows"))
	is.True(strings.Contains(out, "3 created, 0 updated, 0 unchanged, 1 rejected"))
	out, err = runCmd(args...)
	is.NoErr(err)
	is.True(strings.Contains(out, "0 created, 0 updated, 3 unchanged, 1 rejected"))

	// Flags first, the file last; a column mapped by hand to a title.
	is.NoErr(os.WriteFile(file, []byte("email,Role\nann@acme.test,VP\n"), 0o600))
	out, err = runCmd("import", "--db", dsn, "--workspace", "acme", "--map", "Role=headline", file)
	is.NoErr(err)
	is.True(strings.Contains(out, "0 created, 1 updated, 0 unchanged, 0 rejected"))

	_, err = runCmd("import", file, "--db", dsn, "--workspace", "acme", "--tag", "nope")
	is.True(err != nil && strings.Contains(err.Error(), `no tag "nope"`))
	_, err = runCmd("import", "--db", dsn, "--workspace", "acme")
	is.True(err != nil && strings.Contains(err.Error(), "name the CSV file"))
	out, err = runCmd("import", "--help")
	is.NoErr(err)
	is.True(strings.Contains(out, "Usage: leadline import FILE.csv"))
}
