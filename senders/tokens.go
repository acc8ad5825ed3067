package senders

import (
	"context"
	"errors"
)

// Tokens give the OAuth 2.0 access tokens of the senders whose mailbox is
// connected with a provider's account (Google, Microsoft): the platform's
// are package oauth's, which keeps each sender's refresh token sealed and
// refreshes access tokens before they expire.
type Tokens interface {
	// AccessToken returns an access token for sender s's connected
	// account. fresh asks for a new one even when the one in hand has not
	// expired: the mail server refused it. Returns an error wrapping
	// ErrNotConnected when s has no connected account, and one wrapping
	// ErrReconnect when the provider refused the refresh token (revoked,
	// expired, consent withdrawn): it is not asked again until the account
	// is connected again.
	AccessToken(ctx context.Context, s *Sender, provider string, fresh bool) (string, error)
}

var (
	// ErrNotConnected is a sender whose settings ask for OAuth and whose
	// account was never connected.
	ErrNotConnected = errors.New("the account is not connected")
	// ErrReconnect is a sender whose connected account's refresh token
	// the provider refused.
	ErrReconnect = errors.New("the provider refused the connection")
)
