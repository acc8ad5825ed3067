package main

import (
	"context"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/setup"
	"github.com/leadline/leadline/workspace"
)

// renewKeys revokes the workspace's unrevoked keys whose names start with
// prefix, left by an earlier run of the command, and creates keys as ins
// say (their names get prefix), so that running a command again replaces
// its keys instead of piling them up. It returns the new secrets, in the
// order of ins, and how many keys it revoked.
func renewKeys(ctx context.Context, ws *workspace.Service, name, prefix string, ins []workspace.KeyInput) ([]string, int, error) {
	old, err := ws.Keys(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	replaced := 0
	for _, k := range old {
		if strings.HasPrefix(k.Name, prefix) && k.RevokedAt == nil {
			if _, err := ws.RevokeKey(ctx, name, k.ID); err != nil {
				return nil, 0, err
			}
			replaced++
		}
	}
	secrets := make([]string, len(ins))
	for i, in := range ins {
		in.Workspace, in.Name = name, prefix+in.Name
		_, secret, err := ws.CreateKey(ctx, in)
		if err != nil {
			return nil, 0, err
		}
		secrets[i] = secret
	}
	return secrets, replaced, nil
}

// keyHolder returns the first active owner or manager of a setup file's
// workspace, who may hold a manager key, or "" when it names none.
func keyHolder(spec setup.Workspace) string {
	for _, m := range spec.Members {
		if (m.Active == nil || *m.Active) && m.Role.AtLeast(apikit.RoleManager) {
			return strings.TrimSpace(m.Email)
		}
	}
	return ""
}
