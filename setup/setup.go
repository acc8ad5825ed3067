// Package setup applies a setup file: the declarative form of what the
// spec leaves to the web application (workspaces with their members,
// clients, stages, tags, lists and blacklist, and their senders and
// sequences). Applying a
// file creates or updates everything by name in one transaction; applying
// it again changes nothing.
package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/workspace"
)

// File is a whole setup file.
type File struct {
	Workspaces []Workspace `yaml:"workspaces"`
}

// Workspace is one workspace of a setup file with what it owns.
type Workspace struct {
	workspace.WorkspaceSpec `yaml:",inline"`
	Bookings                bookings.Secrets `yaml:"bookings"`
	// Holidays are the workspace's days off: every sender's too.
	Holidays  *senders.Holidays `yaml:"holidays"`
	Senders   []senders.Spec    `yaml:"senders"`
	Sequences []sequences.Spec  `yaml:"sequences"`
}

// Decode reads a setup file. Unknown fields are errors, so that a typo is
// not silently ignored.
func Decode(r io.Reader) (File, error) {
	var f File
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return File{}, err
	}
	return f, nil
}

// ReadFile reads and decodes the setup file at path.
func ReadFile(path string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	parsed, err := Decode(f)
	if err != nil {
		return File{}, fmt.Errorf("%s is not a valid setup file: %w", path, err)
	}
	return parsed, nil
}

// Apply applies f on d in one transaction and returns one line per change.
// The providers' signing secrets (bookings) are stored sealed under key.
// Nothing is changed when any part is invalid.
func Apply(ctx context.Context, d *db.DB, clock apikit.Clock, key secret.Key, f File) ([]string, error) {
	pl := platform.New(platform.Config{DB: d, Clock: clock, SecretKey: key})
	ws, ss, qs, es := pl.Workspaces, pl.Senders, pl.Sequences, pl.Enrollments
	var changes []string
	err := d.InTx(ctx, func(ctx context.Context) error {
		changes = nil
		for _, spec := range f.Workspaces {
			w, clients, c, err := ws.ApplyWorkspace(ctx, spec.WorkspaceSpec)
			if err != nil {
				return err
			}
			changes = append(changes, c...)
			c0, err := pl.Bookings.SetSecrets(ctx, w.ID, spec.Bookings)
			if err != nil {
				return prefix(spec.Name, err)
			}
			c, err = ss.Apply(ctx, senders.Owner{WorkspaceID: w.ID, Timezone: w.Timezone, Clients: clients, Holidays: spec.Holidays}, spec.Senders)
			if err != nil {
				return prefix(spec.Name, err)
			}
			c2, err := qs.Apply(ctx, sequences.Owner{WorkspaceID: w.ID, Clients: clients}, spec.Sequences)
			if err != nil {
				return prefix(spec.Name, err)
			}
			if err := es.SetupChanged(ctx, w.ID); err != nil {
				return err
			}
			for _, line := range slices.Concat(c0, c, c2) {
				changes = append(changes, fmt.Sprintf("workspace %s: %s", spec.Name, line))
			}
		}
		return nil
	})
	return changes, err
}

// prefix names the workspace in an error's message.
func prefix(workspaceName string, err error) error {
	return apikit.Prefixed(fmt.Sprintf("Workspace %q: ", workspaceName), err)
}
