package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/apitest"
)

func TestCustomTransport(t *testing.T) {
	is := is.New(t)
	clock := apikit.NewFakeClock(apitest.T0)
	var out bytes.Buffer
	tr := NewPrinter(&out, clock)
	is.NoErr(run(context.Background(), filepath.Join(t.TempDir(), "custom.db"), clock, tr, 48))
	t.Log(out.String())
	// Both leads got the profile view and the invitation, through the
	// program's transport, once each.
	is.Equal(tr.Performed(), 4)
	is.Equal(strings.Count(out.String(), "> pat profile_view -> "), 2)
	is.Equal(strings.Count(out.String(), "> pat invite -> "), 2)
	is.True(strings.Contains(out.String(), `"Hi Bill, glad to connect."`))
}
