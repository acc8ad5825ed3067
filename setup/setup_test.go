package setup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/setup"
)

const file = `workspaces:
  - name: acme
    timezone: Europe/Berlin
    members: [{email: owner@acme.test, role: owner}]
    clients: [Globex]
    senders:
      - {name: anna, channel: linkedin, client: Globex}
      - {name: mail, channel: email, address: sales@acme.test}
    sequences:
      - name: Berlin CTOs
        client: Globex
        senders: [anna, mail]
        steps:
          - {id: visit, type: profile_view}
          - {id: invite, type: invite, note: "Hi {{first_name}}, saw your talk on {{custom.topic|platform teams}}."}
          - {id: accepted, type: condition, if: invite_accepted, within_days: 14, then: hello, else: mail}
          - {id: hello, type: message, body: "Thanks for connecting, {{first_name|there}}!"}
          - {id: pause, type: wait, days: 3, working_days: true}
          - {id: mail, type: email, subject: "{{company}} and us", body: "Hello"}
`

func TestApplySequences(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		apply := func(text string) ([]string, error) {
			f, err := setup.Decode(strings.NewReader(text))
			if err != nil {
				return nil, err
			}
			return setup.Apply(ctx, d, clock, secret.TestKey(), f)
		}
		changes, err := apply(file)
		is.NoErr(err)
		is.Equal(changes[len(changes)-1], "workspace acme: sequence Berlin CTOs added (draft)")
		changes, err = apply(file)
		is.NoErr(err)
		is.Equal(len(changes), 0)

		svc := sequences.NewService(d, clock, senders.NewService(d, clock, events.NewLog(d, clock)), nil, events.NewLog(d, clock))
		var wsID string
		is.NoErr(d.NewSelect().Table("workspaces").Column("id").Where("name = 'acme'").Scan(ctx, &wsID))
		is.NoErr(svc.ActivateByName(ctx, wsID, "Berlin CTOs"))

		// An active sequence's steps cannot change; paused, they can.
		changed := strings.Replace(file, "days: 3", "days: 4", 1)
		_, err = apply(changed)
		is.True(err != nil && strings.Contains(err.Error(), "Pause it first"))
		q, err := svc.ByName(ctx, wsID, "Berlin CTOs")
		is.NoErr(err)
		_, err = svc.Pause(ctx, apikit.Principal{WorkspaceID: wsID}, q.ID)
		is.NoErr(err)
		changes, err = apply(changed)
		is.NoErr(err)
		is.Equal(changes, []string{"workspace acme: sequence Berlin CTOs updated (steps)"})

		// Problems are saved and named; they block activation, not saving.
		broken := strings.Replace(file, "then: hello, else: mail", "then: mail, else: hello", 1)
		changes, err = apply(broken)
		is.NoErr(err)
		is.True(strings.Contains(changes[0], "1 problem(s) block activation: message_needs_connection hello"))
		is.Equal(apikit.ErrorCode(svc.ActivateByName(ctx, wsID, "Berlin CTOs")), apikit.EGraphInvalid)

		// Unknown senders, senders of another client and unknown fields are refused.
		_, err = apply(strings.Replace(file, "senders: [anna, mail]", "senders: [anna, bob]", 1))
		is.True(err != nil && strings.Contains(err.Error(), `sender "bob" is not a sender`))
		_, err = apply(strings.Replace(file, "{id: visit, type: profile_view}", "{id: visit, type: profile_view, delay: 3}", 1))
		is.True(err != nil && strings.Contains(err.Error(), "delay"))
	})
}

// TestApplyRefusesMachineTimezones: a workspace's or a sender's timezone
// is an IANA name, never one whose meaning depends on the server (Local,
// localtime, the posix/ and right/ copies); apply refuses it and changes
// nothing.
func TestApplyRefusesMachineTimezones(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		apply := applier(ctx, d, clock)
		for _, tz := range []string{"Local", "localtime", "posixrules", "posix/Europe/Berlin", "right/UTC", "/etc/localtime", "Europe/../UTC", "Mars/Olympus"} {
			err := apply(strings.Replace(file, "timezone: Europe/Berlin", "timezone: "+tz, 1))
			if apikit.ErrorCode(err) != apikit.EPayloadInvalid || !strings.Contains(err.Error(), "timezone") {
				t.Errorf("workspace timezone %q: %v", tz, err)
			}
			err = apply(strings.Replace(file, "{name: anna, channel: linkedin, client: Globex}", "{name: anna, channel: linkedin, client: Globex, timezone: "+tz+"}", 1))
			if apikit.ErrorCode(err) != apikit.EPayloadInvalid || !strings.Contains(err.Error(), "timezone") {
				t.Errorf("sender timezone %q: %v", tz, err)
			}
		}
		n, err := d.NewSelect().Table("workspaces").Count(ctx)
		is.NoErr(err)
		is.Equal(n, int64(0)) // nothing was applied
		is.NoErr(apply(strings.Replace(file, "timezone: Europe/Berlin", "timezone: America/Argentina/Buenos_Aires", 1)))
	})
}

// TestApplyRefusesLineBreaksInOneLineFields: every one-line value of a
// setup file (names, subjects, titles, step ids, emails, addresses, tags,
// stages) refuses a line break, a tab, DEL, a C1 control and U+2028, and
// the error names the field; notes and bodies keep their line breaks.
// Nothing is applied.
func TestApplyRefusesLineBreaksInOneLineFields(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		is := is.New(t)
		ctx := context.Background()
		clock := apikit.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
		apply := func(text string) error {
			f, err := setup.Decode(strings.NewReader(text))
			is.NoErr(err)
			_, err = setup.Apply(ctx, d, clock, secret.TestKey(), f)
			return err
		}
		for _, bad := range []string{`\r\nBcc: x@evil.test`, `\t`, `\u2028`, `\x7f`, `\x85`} {
			for _, c := range []struct{ old, new, field string }{
				{"name: acme", `name: "acme` + bad + `"`, `name holds`},
				{"clients: [Globex]", `clients: [Globex, "Init` + bad + `ech"]`, `clients[1] holds`},
				{"timezone: Europe/Berlin", "timezone: Europe/Berlin\n    stages: [\"New" + bad + "\"]", `stages[0] holds`},
				{"timezone: Europe/Berlin", "timezone: Europe/Berlin\n    tags: [\"vip" + bad + "\"]", `tags[0] holds`},
				{"owner@acme.test", `"owner` + bad + `@acme.test"`, `members[0].email holds`},
				{"{name: anna,", `{name: "an` + bad + `na",`, `Sender "an`},
				{"address: sales@acme.test", `address: "sales@acme.test` + bad + `"`, `Sender "mail": address holds`},
				{"name: Berlin CTOs", `name: "Berlin` + bad + ` CTOs"`, `name holds`},
				{`subject: "{{company}} and us"`, `subject: "{{company}} and us` + bad + `"`, `Sequence "Berlin CTOs": steps[5].subject holds`},
				{"{id: visit, type: profile_view}", `{id: "vis` + bad + `it", type: profile_view}`, `Sequence "Berlin CTOs": steps[0].id holds`},
				{"{id: pause, type: wait, days: 3, working_days: true}", `{id: call, type: task, title: "Call` + bad + `"}`, `Sequence "Berlin CTOs": steps[4].title holds`},
			} {
				err := apply(strings.Replace(file, c.old, c.new, 1))
				is.Equal(apikit.ErrorCode(err), apikit.EPayloadInvalid)
				if !strings.Contains(err.Error(), c.field) {
					t.Fatalf("%s: the error does not name %q: %v", c.new, c.field, err)
				}
			}
		}
		var n int
		is.NoErr(d.NewSelect().Table("workspaces").ColumnExpr("count(*)").Scan(ctx, &n))
		is.Equal(n, 0) // nothing was applied

		// A note and a body keep their line breaks.
		multi := strings.Replace(file, `body: "Hello"`, `body: "Hello,\r\n\r\n\tsee you"`, 1)
		is.NoErr(apply(strings.Replace(multi, `note: "Hi {{first_name}}, saw`, `note: "Hi {{first_name}},\nsaw`, 1)))
	})
}
