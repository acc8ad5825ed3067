package senders

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
)

// TransportKind declares one kind of transport a sender may choose: the
// channel it serves, what its senders can do, and the settings they take.
type TransportKind struct {
	Name    string
	Channel Channel // "" for both
	// Threads: the transport continues a conversation (Request.Thread is
	// filled for its senders' messages and emails).
	Threads bool
	// Actions are the actions the transport can perform; a sequence whose
	// step needs another one of a sender on this kind does not activate.
	Actions []Action
	// Sections are the settings sections its senders take (smtp and imap
	// for a mailbox); a setup file's sender holds them beside its fields.
	Sections []string
	// Check says what is wrong with a sender's settings, nil when nothing
	// is: its sections are the kind's and each holds what it must.
	Check func(set Settings) error
	// Secrets are the names of the secrets set names.
	Secrets func(set Settings) []string
}

// Can reports whether senders on kind k can perform a.
func (k TransportKind) Can(a Action) bool { return slices.Contains(k.Actions, a) }

// CheckSections says which of set's sections kind k does not take, and
// which it needs that set lacks.
func (k TransportKind) CheckSections(set Settings) error {
	for _, name := range set.Names() {
		if !slices.Contains(k.Sections, name) {
			if len(k.Sections) == 0 {
				return fmt.Errorf("transport %s takes no settings, and %s is not a sender's field", k.Name, name)
			}
			return fmt.Errorf("transport %s takes %s settings; %s is not one of them, nor a sender's field", k.Name, Listing(k.Sections), name)
		}
	}
	for _, name := range k.Sections {
		if _, ok := set[name]; !ok {
			return fmt.Errorf("transport %s needs %s settings", k.Name, Listing(k.Sections))
		}
	}
	return nil
}

func init() {
	// The sandbox network is built in: the default transport, which needs
	// no account and takes no settings.
	Register(Plugin{TransportKind: TransportKind{Name: TransportSandbox, Actions: actionList(),
		Check: func(set Settings) error { return nil }}})
}

// envName is an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckEnv checks that name, the settings' field, names an environment
// variable (required: it must be given).
func CheckEnv(field, name string, required bool) error {
	if name == "" {
		if required {
			return fmt.Errorf("%s is required: the name of the environment variable that holds the secret", field)
		}
		return nil
	}
	if !envName.MatchString(name) {
		return fmt.Errorf("%s %q is not an environment variable's name (letters, digits and _); the secret itself never goes in the setup file", field, name)
	}
	return nil
}

// ErrCredentialsMissing is a secret whose environment variable is not set:
// a sender-level error that the sender's health shows
// (credentials_missing), never a crash.
var ErrCredentialsMissing = errors.New("credentials missing")

// Credentials give a transport a sender's secrets when it connects, by the
// name its settings give (an environment variable today; a secret a
// manager typed in the console, stored sealed, later).
type Credentials interface {
	// Secret returns the secret named name for sender s.
	// Returns an error wrapping ErrCredentialsMissing when it is not set.
	Secret(ctx context.Context, s *Sender, name string) (string, error)
}

// EnvCredentials reads secrets from the process's environment.
type EnvCredentials struct{}

// Secret returns the environment variable name.
func (EnvCredentials) Secret(_ context.Context, s *Sender, name string) (string, error) {
	if v := os.Getenv(name); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("%w: sender %s needs the environment variable %s", ErrCredentialsMissing, s.Name, name)
}

// SecretNames are the names of the secrets a sender's settings name, on
// transport kind.
func (set Settings) SecretNames(kind string) []string {
	k, ok := KindOf(kind)
	if !ok || k.Secrets == nil {
		return nil
	}
	out := slices.DeleteFunc(k.Secrets(set), func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// SecretNames are the names of the secrets s's settings name.
func (s *Sender) SecretNames() []string { return s.Settings.SecretNames(s.Transport) }
