package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/client"
	"github.com/leadline/leadline/internal/apitest"
)

func TestEmbed(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	var out bytes.Buffer
	app, err := run(ctx, filepath.Join(t.TempDir(), "embed.db"), apikit.NewFakeClock(apitest.T0), &out)
	is.NoErr(err)
	t.Log(out.String())
	is.True(strings.Contains(out.String(), "upserted 3 leads"))
	is.True(strings.Contains(out.String(), "enrolled 3"))
	is.True(!strings.Contains(out.String(), "runner: 0 steps"))

	hs := httptest.NewServer(app.Handler)
	defer hs.Close()
	get := func(path string) (int, string, string) {
		resp, err := http.Get(hs.URL + path)
		is.NoErr(err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	// The program's API, in its own error format.
	code, _, body := get("/crm/greet?name=Ada")
	is.Equal(code, 200)
	is.True(strings.Contains(body, "Hello, Ada"))
	code, ct, body := get("/crm/greet?name=")
	is.Equal(code, 422)
	is.Equal(ct, "application/problem+json")
	is.True(strings.Contains(body, `"title":"Unprocessable Entity"`))
	code, _, body = get("/crm/greet?name=nobody")
	is.Equal(code, 404)
	is.True(strings.Contains(body, `"detail":"no such person"`))

	// leadline's API beside it, in leadline's envelope.
	code, _, body = get("/v1/leads")
	is.Equal(code, 401)
	is.True(strings.Contains(body, `"code":"E_UNAUTHORIZED"`))
	c := client.New(hs.URL, app.Key)
	page, err := c.ListLeads(ctx, client.LeadsParams{})
	is.NoErr(err)
	is.Equal(page.Total, 3)
	_, err = c.ListLeads(ctx, client.LeadsParams{PageParams: client.PageParams{Limit: 1000}})
	is.True(errors.Is(err, client.ErrPayloadInvalid))
}
