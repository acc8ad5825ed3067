package unipile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/leadline/leadline/senders"
)

var (
	_ senders.Checker = (*Transport)(nil)
	_ senders.Prober  = (*Transport)(nil)
)

// StatusRunning is the status of an account Unipile can act for.
const StatusRunning = "running"

// Check says, step by step, whether the sender can work through Unipile:
// its settings, the API key in its variable, the account at Unipile, and
// the account's status, with what to fix.
func (t *Transport) Check(ctx context.Context, s *senders.Sender) []senders.CheckStep {
	u := accountOf(s)
	if u == nil || u.AccountID == "" || u.APIKeyEnv == "" {
		return []senders.CheckStep{{What: "unipile settings",
			Detail: "account_id and api_key_env are required; add them under the sender's unipile settings and apply the setup file"}}
	}
	out := []senders.CheckStep{{What: "unipile settings", OK: true, Detail: "account " + u.AccountID + " at " + firstOf(u.BaseURL, DefaultBaseURL)}}
	if _, err := t.cfg.Credentials.Secret(ctx, s, u.APIKeyEnv); err != nil {
		detail := err.Error()
		if errors.Is(err, senders.ErrCredentialsMissing) {
			detail = "not set: set " + u.APIKeyEnv + " in the environment of the leadline processes and restart them"
		}
		return append(out, senders.CheckStep{What: "API key in " + u.APIKeyEnv, Detail: detail})
	}
	out = append(out, senders.CheckStep{What: "API key in " + u.APIKeyEnv, OK: true, Detail: "set"})
	info, err := t.account(ctx, s)
	if te, ok := senders.AsTransportError(err); ok && te.Code == CodeAccountDisconnected {
		// Unipile knows the account but cannot use its session.
		info, err = accountInfo{ID: u.AccountID, Status: "disconnected"}, nil
	}
	if err != nil {
		return append(out, senders.CheckStep{What: "account " + u.AccountID + " at Unipile", Detail: accountProblem(s, err)})
	}
	out = append(out, senders.CheckStep{What: "account " + u.AccountID + " at Unipile", OK: true, Detail: "found"})
	if err := statusError(s, info.Status); err != nil {
		return append(out, senders.CheckStep{What: "account status", Detail: err.Error()})
	}
	return append(out, senders.CheckStep{What: "account status", OK: true, Detail: StatusRunning})
}

// Probe reads the account's status at Unipile: nil when it is running.
func (t *Transport) Probe(ctx context.Context, s *senders.Sender) error {
	if accountOf(s) == nil {
		return noSettings(s)
	}
	info, err := t.account(ctx, s)
	if err != nil {
		return err
	}
	if err := statusError(s, info.Status); err != nil {
		return &senders.TransportError{Kind: senders.SenderLevel, Code: CodeAccountDisconnected, Signal: senders.SignalAccountDisconnected, Message: err.Error()}
	}
	// Unipile may list an account running whose LinkedIn session it has
	// not yet found ended: one read through the session (the newest
	// relation) proves it, so that a recovery is not undone by the next
	// action, hour after hour.
	var rels list[relation]
	return t.call(ctx, s, http.MethodGet, accountPath(s, "users", "me", "relations"), url.Values{"limit": {"1"}}, nil, &rels)
}

// statusError says what an account's status other than running means and
// what to do about it.
func statusError(s *senders.Sender, status string) error {
	switch strings.ToLower(status) {
	case StatusRunning:
		return nil
	case "disconnected":
		return fmt.Errorf("disconnected: Unipile lost sender %s's LinkedIn session; its owner must reconnect the account in Unipile (dashboard or hosted auth link)", s.Name)
	case "paused":
		return fmt.Errorf("paused: the account is paused in Unipile; resume it in Unipile's dashboard")
	case "errored":
		return fmt.Errorf("errored: Unipile reports an error on the account; see its dashboard, and reconnect the account if it asks")
	}
	return fmt.Errorf("%q: Unipile does not report the account running; see its dashboard", status)
}

// accountProblem is what to fix when the account cannot be read.
func accountProblem(s *senders.Sender, err error) string {
	te, ok := senders.AsTransportError(err)
	switch {
	case !ok:
		return "Unipile did not answer: " + err.Error() + "; check base_url and the network"
	case te.Code == CodeAccountNotFound:
		return fmt.Sprintf("Unipile has no account %s under this API key: check account_id (acc_…) in Unipile's v2 dashboard", accountOf(s).AccountID)
	}
	return te.Message
}
