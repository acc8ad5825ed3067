package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/workspace"
)

// A Go program can run the whole API in-process: open a database, set up a
// workspace and a key, and mount the handler on its own mux.
func Example_embedded() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "leadline-example")
	defer os.RemoveAll(dir)

	d, err := db.Open(ctx, filepath.Join(dir, "leadline.db"))
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := d.Migrate(ctx); err != nil {
		panic(err)
	}
	ws := workspace.NewService(d, apikit.SystemClock{})
	if _, err := ws.Apply(ctx, workspace.Setup{Workspaces: []workspace.WorkspaceSpec{{
		Name: "acme", Members: []workspace.MemberSpec{{Email: "owner@acme.test", Role: apikit.RoleOwner}},
	}}}); err != nil {
		panic(err)
	}
	_, key, err := ws.CreateKey(ctx, workspace.KeyInput{Workspace: "acme", MemberEmail: "owner@acme.test", Role: apikit.RoleMember})
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/", server.New(server.Config{DB: d}).Handler())
	ts := httptest.NewServer(mux)
	defer ts.Close()

	req, _ := http.NewRequest("GET", ts.URL+"/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var me struct {
		Data struct {
			Role      string
			Workspace struct{ Name string }
		}
	}
	_ = json.NewDecoder(res.Body).Decode(&me)
	fmt.Println(res.StatusCode, me.Data.Workspace.Name, me.Data.Role)
	// Output: 200 acme member
}
