package unipile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/leadline/leadline/senders"
)

// Who an answer from Unipile concerns: the lead of the action alone, the
// sender's whole account, or nobody yet (the outcome is unknown).
const (
	// ForLead: the step fails with the reason on the enrollment; the
	// sender goes on with every other lead.
	ForLead = "lead"
	// ForSender: the sender's health takes the reason, its enrollments
	// wait, and nothing is tried against the account until its check
	// passes (or the rate limit lapses).
	ForSender = "sender"
	// ForUnknown: the action may or may not have happened; leadline looks
	// it up before any retry.
	ForUnknown = "unknown"
)

// ErrorRow is one row of the table of Unipile's answers: an HTTP status
// (0: any) and an error type (an exact type, a "thrower/*" family, or ""
// for any), and what leadline makes of it.
type ErrorRow struct {
	Status int
	Type   string
	// Who is ForLead, ForSender or ForUnknown.
	Who string
	// Code is the transport error's code; for ForSender also the signal.
	Code string
	// Meaning says what the answer means, for the documentation.
	Meaning string
}

// Errors is the table of Unipile's error answers (v2 reference "Error
// responses": an RFC 7807 body with a "thrower/info" type, thrown by
// Unipile's api or forwarded from the provider), first match wins. A
// member's refusal never stops the account: only answers about the API key
// or the account itself are the sender's. docs/TRANSPORTS.md renders it.
var Errors = []ErrorRow{
	{http.StatusUnauthorized, "provider/*", ForSender, CodeAccountDisconnected,
		"LinkedIn no longer accepts the account's session (provider/invalid_authorization, invalid_credentials, account_mismatch): the account must be reconnected in Unipile."},
	{http.StatusUnauthorized, "", ForSender, CodeAuthFailed,
		"Unipile refused the API key (api/missing_authorization, api/expired_authorization, or no type)."},
	{http.StatusBadRequest, "api/invalid_auth_format", ForSender, CodeAuthFailed,
		"Unipile cannot read the API key."},
	{http.StatusForbidden, "api/*", ForSender, CodeAccountDisconnected,
		"Unipile will not act for the account (api/inactive_subscription, api/account_restricted, api/insufficient_permissions): see Unipile's dashboard."},
	{http.StatusForbidden, "", ForLead, CodeProfileInaccessible,
		"LinkedIn does not let the account reach this member (provider/insufficient_permissions: \"This profile can't be accessed\")."},
	{http.StatusNotFound, "api/*", ForSender, CodeAccountNotFound,
		"Unipile has no such account (api/resource_not_found on the account): account_id is wrong. On a member's path the account is read first, and when it exists the answer is the member's (profile_not_found)."},
	{http.StatusNotFound, "", ForLead, CodeProfileNotFound,
		"LinkedIn has no such member or conversation (provider/resource_not_found)."},
	{http.StatusConflict, "", ForLead, CodeInvitationPending,
		"An invitation to the member is already pending, or the request conflicts with the member's state (api/already_exists, conflict)."},
	{http.StatusUnprocessableEntity, "", ForLead, CodeRefused,
		"LinkedIn refused the action for this member (provider/unprocessable_entity: not a connection, cannot be invited, note too long, invitation already sent or refused)."},
	{http.StatusBadRequest, "", ForLead, CodeRefused,
		"The request for this member is invalid (api/invalid_parameters, provider/invalid_parameters: a note or message over LinkedIn's length)."},
	{http.StatusTooManyRequests, "", ForSender, CodeRateLimited,
		"Unipile or LinkedIn asks the account to slow down (api/too_many_requests with retry-after, provider/too_many_requests): the account's actions pause until the hint, or an hour without one."},
	{0, "provider/too_many_requests", ForSender, CodeRateLimited,
		"LinkedIn asks the account to slow down, whatever the status."},
	{http.StatusNotImplemented, "", ForLead, CodeUnsupported,
		"Unipile does not perform this for LinkedIn (api/not_implemented)."},
	{0, "", ForUnknown, "",
		"Any 5xx, a cut connection or a timeout: the outcome is unknown. leadline looks the action up (the sent invitations, the conversation's messages) before trying again, and never sends twice. LinkedIn's limits can surface as 500: after 3 unknown outcomes in a row on one account its actions pause as provider_rate_limited for CoolDown."},
}

// row returns the first row of Errors that matches an answer.
func row(status int, typ string) ErrorRow {
	for _, r := range Errors {
		if r.Status != 0 && r.Status != status {
			continue
		}
		if r.Type == "" || r.Type == typ || (strings.HasSuffix(r.Type, "/*") && strings.HasPrefix(typ, strings.TrimSuffix(r.Type, "*"))) {
			if r.Who == ForUnknown && status >= 400 && status < 500 {
				// Any other refusal is the lead's: Unipile answered, and
				// nothing says the account is at fault.
				return ErrorRow{Status: status, Who: ForLead, Code: CodeRefused}
			}
			return r
		}
	}
	return ErrorRow{Who: ForUnknown}
}

// problem is Unipile's error answer.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Status int    `json:"status"`
}

// errAccountUnverified marks a 404 api/… on a member's path: whether the
// account or the member is missing is settled by reading the account.
type errAccountUnverified struct{ member error }

func (e *errAccountUnverified) Error() string { return e.member.Error() }
func (e *errAccountUnverified) Unwrap() error { return e.member }

// answerError maps an error answer to what the runner does with it, by
// the table Errors. A refusal is a *senders.TransportError; an answer
// whose outcome is unknown is a plain error.
func answerError(s *senders.Sender, resp *http.Response, data []byte, now time.Time, accountPath bool) error {
	var p problem
	_ = json.Unmarshal(data, &p)
	said := strings.TrimSpace(firstOf(p.Detail, p.Title, http.StatusText(resp.StatusCode)))
	if len(said) > 300 {
		said = said[:300] + "…"
	}
	if p.Type != "" {
		said += " (" + p.Type + ")"
	}
	u := accountOf(s)
	r := row(resp.StatusCode, p.Type)
	switch r.Who {
	case ForUnknown:
		return fmt.Errorf("unipile: answered %d: %s", resp.StatusCode, said)
	case ForLead:
		te := &senders.TransportError{Kind: senders.Permanent, Code: r.Code}
		switch r.Code {
		case CodeProfileInaccessible:
			te.Message = fmt.Sprintf("LinkedIn does not let sender %s reach this member: %s. The step fails for this lead only; the sender goes on.", s.Name, said)
		case CodeProfileNotFound:
			te.Message = fmt.Sprintf("Unipile found nothing: %s. Check the lead's LinkedIn identifier.", said)
		case CodeInvitationPending:
			te.Message = "LinkedIn, through Unipile, refused: " + said + ". An invitation to this member may already be pending."
		default:
			te.Message = "LinkedIn, through Unipile, refused: " + said
		}
		return te
	}
	if r.Code == CodeAccountNotFound && !accountPath {
		return &errAccountUnverified{member: &senders.TransportError{Kind: senders.Permanent, Code: CodeProfileNotFound,
			Message: fmt.Sprintf("Unipile found nothing: %s. Check the lead's LinkedIn identifier.", said)}}
	}
	te := &senders.TransportError{Kind: senders.SenderLevel, Code: r.Code, Signal: r.Code}
	switch r.Code {
	case CodeAccountDisconnected:
		te.Message = fmt.Sprintf("Unipile cannot act for sender %s's LinkedIn account: %s. Its owner must reconnect the account in Unipile (hosted auth link) or settle it in Unipile's dashboard; sending resumes when the hourly check finds it running.", s.Name, said)
	case CodeAuthFailed:
		te.Message = fmt.Sprintf("Unipile refused the API key of sender %s: %s. Check the key in %s and that it belongs to the application of account %s.", s.Name, said, u.APIKeyEnv, u.AccountID)
	case CodeAccountNotFound:
		te.Message = fmt.Sprintf("Unipile has no account %s under sender %s's API key: %s. Correct account_id (acc_…, in Unipile's dashboard) and apply the setup file.", u.AccountID, s.Name, said)
	case CodeRateLimited:
		wait := retryAfter(resp.Header.Get("Retry-After"), now)
		hint := "Unipile gave no retry time; the account's actions pause for an hour"
		if wait > 0 {
			hint = "the account's actions pause for " + wait.String()
		}
		te.RetryAfter = wait
		te.Message = fmt.Sprintf("Unipile rate-limited sender %s: %s; %s. Lower the sender's daily caps if this repeats.", s.Name, said, hint)
	}
	return te
}
