package senders

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
)

// Plugin is one kind of transport as leadline plugs it in: what its
// senders can do and the settings they take (TransportKind), how the
// transport is built for a platform, how the console asks for its
// settings, and how its provider reports back. A transport package
// declares one and registers it in its init; platform lists the packages.
type Plugin struct {
	TransportKind
	// New builds the transport for a platform.
	New func(env Env) Transport
	// Form is how the console asks for the settings (nil: none).
	Form *Form
	// Webhook is how the provider reports by HTTP, at POST
	// /inbound/<Name> (nil: it does not).
	Webhook *Webhook
	// Reader returns the transport's background reader, which `leadline
	// serve` and `leadline work` run until their context ends (nil: none).
	Reader func(env Env) Runner
}

// Runner is a background loop: it runs until ctx ends.
type Runner interface {
	Run(ctx context.Context) error
}

// Env is what a platform gives a transport it builds.
type Env struct {
	DB          *db.DB
	Clock       apikit.Clock
	Logger      *slog.Logger
	Credentials Credentials
	// Tokens give the access tokens of the mailboxes connected with OAuth
	// (nil: none is).
	Tokens Tokens
	// Sink is the durable inbound queue.
	Sink InboundSink
	// Invitations are the senders' pending invitations as leadline
	// recorded them.
	Invitations Invitations
	// Senders lists the senders of a transport kind in every workspace.
	Senders func(ctx context.Context, kind string) ([]*Sender, error)
	// PublicURL is the server's address as the internet sees it ("" when
	// it has none).
	PublicURL string
	// UnsubscribeToken signs a lead's unsubscribe link (nil: the platform
	// has no key, and links fall back to mailto:).
	UnsubscribeToken func(workspaceID, leadID string) (string, error)
	// HTTPClient makes the calls of the transports that call a provider's
	// API.
	HTTPClient *http.Client
	// Seed seeds the sandbox network.
	Seed int64
}

// Form is how the console asks for a transport's settings: fieldsets of
// plain fields, named <section>.<field>, read back into settings.
type Form struct {
	// Fieldsets returns the form for stored settings (empty for a new
	// sender).
	Fieldsets func(set Settings) []Fieldset
	// Read returns the settings a posted form gives, and the secrets typed
	// into it by the name they are stored under; name makes a name for a
	// typed secret whose field names none (what: e.g. SMTP_SECRET). An
	// error names the field that is not what it should be.
	Read func(v url.Values, name func(what string) string) (Settings, map[string]string, error)
}

// Fieldset is a group of a form's fields.
type Fieldset struct {
	Legend string
	Fields []Field
}

// Field is one of a form's fields: Type is text, number, url, password or
// select (with Options). A password field is never filled in.
type Field struct {
	Name, Label, Type, Value, Placeholder string
	Options                               []string
}

// ID is the field's element id.
func (f Field) ID() string { return "f-" + strings.ReplaceAll(f.Name, ".", "-") }

// Webhook is how a provider reports by HTTP. leadline verifies a request's
// signature before it trusts anything in the body, with the webhook
// secret of each sender of the transport in turn (the one whose account
// the body claims first), then parses it.
type Webhook struct {
	// Account returns the provider account a sender's settings connect and
	// the name of its webhook secret ("" when it has none).
	Account func(set Settings) (account, secret string)
	// Claim returns the account an unverified body says it is about: it
	// only orders the secrets tried.
	Claim func(body []byte) string
	// Verify checks the request's signature under secret at now.
	Verify func(secret string, h http.Header, body []byte, now time.Time) error
	// Parse returns the account a verified body is about and what it
	// reports; an error wrapping ErrInvalidReport is a body whose values
	// no lead can hold.
	Parse func(body []byte) (account string, reports []Inbound, err error)
	// Source names the inbound queue's source, and Dedupe a report's key
	// in it.
	Source string
	Dedupe func(account string, in Inbound) string
	// Doc documents the route in the API reference.
	Doc WebhookDoc
}

// WebhookDoc documents a provider's webhook route.
type WebhookDoc struct {
	Provider, OperationID, Summary, Description string
	// SignatureHeader names the request header that carries the
	// signature, described by Signature.
	SignatureHeader, Signature string
}

// ErrInvalidReport is a webhook body whose values no lead can hold.
var ErrInvalidReport = errors.New("invalid report")

var registry = struct {
	sync.RWMutex
	plugins map[string]Plugin
}{plugins: map[string]Plugin{}}

// Register plugs p in under p.Name; a transport package calls it in its
// init. It panics on a second plugin of one name.
func Register(p Plugin) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.plugins[p.Name]; dup {
		panic("senders: transport " + p.Name + " registered twice")
	}
	registry.plugins[p.Name] = p
}

// PluginOf returns the plugin of kind name.
func PluginOf(name string) (Plugin, bool) {
	registry.RLock()
	defer registry.RUnlock()
	p, ok := registry.plugins[name]
	return p, ok
}

// Plugins returns every registered plugin, by name.
func Plugins() []Plugin {
	registry.RLock()
	defer registry.RUnlock()
	out := slices.Collect(maps.Values(registry.plugins))
	slices.SortFunc(out, func(a, b Plugin) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// KindNames are the registered kinds' names, sorted.
func KindNames() []string {
	var out []string
	for _, p := range Plugins() {
		out = append(out, p.Name)
	}
	return out
}

// KindOf returns the transport kind name.
func KindOf(name string) (TransportKind, bool) {
	p, ok := PluginOf(name)
	return p.TransportKind, ok
}

// Settings are how a sender's transport connects: one section per name its
// transport kind declares (Sections), each kept as the JSON the transport
// reads. They hold no secret: a password, token or API key is named (an
// environment variable, or a secret stored sealed), and the transport asks
// Credentials for it when it connects.
type Settings map[string]json.RawMessage

// Value stores the settings as a JSON object.
func (set Settings) Value() (driver.Value, error) {
	if set == nil {
		return "{}", nil
	}
	b, err := json.Marshal(map[string]json.RawMessage(set))
	return string(b), err
}

// Scan reads stored settings.
func (set *Settings) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*set = Settings{}
		return nil
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return fmt.Errorf("senders: settings from %T", src)
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*set = m
	return nil
}

// Equal reports whether set and o hold the same values, however their
// JSON is spaced or ordered.
func (set Settings) Equal(o Settings) bool {
	if len(set) != len(o) {
		return false
	}
	for k, a := range set {
		b, ok := o[k]
		if !ok {
			return false
		}
		var va, vb any
		if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil || !reflect.DeepEqual(va, vb) {
			return false
		}
	}
	return true
}

// Section decodes section name of set into a new T: nil when set has no
// such section. Fields T does not have are an error.
func Section[T any](set Settings, name string) (*T, error) {
	raw, ok := set[name]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	v := new(T)
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "json: "))
	}
	return v, nil
}

// With returns set with section name holding v (removed when v is nil).
func (set Settings) With(name string, v any) Settings {
	out := maps.Clone(set)
	if out == nil {
		out = Settings{}
	}
	if rv := reflect.ValueOf(v); v == nil || (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Map) && rv.IsNil() {
		delete(out, name)
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("senders: settings section " + name + ": " + err.Error())
	}
	out[name] = b
	return out
}

// Names are the section names set holds, sorted.
func (set Settings) Names() []string { return slices.Sorted(maps.Keys(set)) }
