package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/client"
	"github.com/leadline/leadline/internal/apitest"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/server"
)

func TestClientExample(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	env := apitest.Start(t, dbtest.Open(t, db.SQLite), server.RateLimits{})
	c := client.New(env.URL, env.Key)

	var out bytes.Buffer
	is.NoErr(run(ctx, c, "Globex", "Globex CTOs", &out))
	t.Log(out.String())
	is.True(strings.Contains(out.String(), "imported 4 leads"))
	is.True(strings.Contains(out.String(), "enrolled 4"))
	is.True(strings.Contains(out.String(), "inbox: 0 threads"))
	is.True(strings.Contains(out.String(), "funnel enrolled: 4"))

	// Run again: the same leads, imported once, each already enrolled.
	out.Reset()
	is.NoErr(run(ctx, c, "Globex", "Globex CTOs", &out))
	is.True(strings.Contains(out.String(), "imported 4 leads"))
	is.Equal(strings.Count(out.String(), "already_in_sequence"), 4)
	page, err := c.ListLeads(ctx, client.LeadsParams{Source: "examples/client"})
	is.NoErr(err)
	is.Equal(page.Total, 4)

	is.True(run(ctx, c, "Nobody", "Globex CTOs", &out) != nil)
}
