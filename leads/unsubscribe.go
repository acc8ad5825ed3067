package leads

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
)

// Unsubscribe links. Every email a sequence sends carries a link (RFC 8058
// one-click, List-Unsubscribe) whose token names the workspace and the lead.
// The token is sealed under the server's secret key: it shows no id in the
// clear, cannot be forged, and opens only for the workspace it was made for.

// unsubscribeAAD binds a token to its use: a value sealed for another
// column does not open as a token.
var unsubscribeAAD = []byte("leadline unsubscribe")

// UnsubscribeToken returns the token of the unsubscribe link of a lead.
func UnsubscribeToken(k secret.Key, workspaceID, leadID string) (string, error) {
	sealed, err := k.Seal([]byte(workspaceID+"\x00"+leadID), unsubscribeAAD)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

// ReadUnsubscribeToken returns the workspace and lead a token names, and
// false for a token that was not made under k (forged, altered, or made
// under an earlier key).
func ReadUnsubscribeToken(k secret.Key, token string) (workspaceID, leadID string, ok bool) {
	if len(token) > 1024 {
		return "", "", false
	}
	sealed, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", "", false
	}
	plain, err := k.Open(sealed, unsubscribeAAD)
	if err != nil {
		return "", "", false
	}
	ws, lead, found := strings.Cut(string(plain), "\x00")
	if !found || ws == "" || lead == "" {
		return "", "", false
	}
	return ws, lead, true
}

// The sources recorded on lead.suppressed when a lead unsubscribed: by the
// link in an email, or by answering "unsubscribe".
const (
	UnsubscribedByLink  = "unsubscribe_link"
	UnsubscribedByReply = "unsubscribe_reply"
)

// Unsubscribe marks the lead do-not-contact because it asked to receive no
// more mail (source is UnsubscribedByLink or UnsubscribedByReply): its live
// enrollments end and lead.suppressed is recorded with the source. A lead
// already do-not-contact is left as it is.
// Returns E_NOT_FOUND if the workspace has no such lead.
func (s *Service) Unsubscribe(ctx context.Context, workspaceID, leadID, source string) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		l, err := s.visible(ctx, apikit.Principal{WorkspaceID: workspaceID, Role: apikit.RoleOwner}, leadID)
		if err != nil {
			return err
		}
		return s.markDoNotContact(ctx, l, true, "the lead unsubscribed", map[string]any{"source": source})
	})
}

// MatchInbound returns the id of the workspace's lead that an inbound
// message came from: by the provider's id of the person, then by its
// work or personal email address, then by its public identifier (the
// oldest lead that has it); "" when no lead matches.
func (s *Service) MatchInbound(ctx context.Context, workspaceID, email, providerID, publicIdentifier string) (string, error) {
	try := []struct {
		key   matchKey
		value string
	}{{keyProviderID, providerID}, {keyEmailWork, email}, {keyEmailPersonal, email},
		{keyPublicIdentifier, strings.ToLower(strings.Trim(strings.TrimSpace(publicIdentifier), "/"))}}
	for _, t := range try {
		if t.value == "" {
			continue
		}
		l, err := s.store.FindBy(ctx, workspaceID, t.key, t.value)
		if err == nil && l != nil {
			return l.ID, nil
		}
		if err != nil && !db.IsNoRows(err) {
			return "", err
		}
	}
	return "", nil
}
