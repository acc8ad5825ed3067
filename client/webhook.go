package client

import (
	"net/http"
	"time"

	"github.com/leadline/leadline/webhooks"
)

// WebhookTolerance is how far a delivery's timestamp may be from now for
// VerifyWebhook.
const WebhookTolerance = 5 * time.Minute

// The headers of a webhook delivery.
const (
	WebhookIDHeader        = webhooks.HeaderID
	WebhookTimestampHeader = webhooks.HeaderTimestamp
	WebhookSignatureHeader = webhooks.HeaderSignature
)

// Errors of VerifyWebhook.
var (
	ErrWebhookUnsigned     = webhooks.ErrNoSignature
	ErrWebhookStale        = webhooks.ErrBadTimestamp
	ErrWebhookBadSignature = webhooks.ErrBadSignature
)

// VerifyWebhook checks a webhook delivery a receiver got, with the
// webhook's signing secret (whsec_…, shown when it was created): its
// signature over the delivery id, timestamp and body, and that it was
// signed within WebhookTolerance of now. Verify the body as it arrived,
// before decoding it. A delivery may come more than once: its id
// (WebhookIDHeader) stays the same across retries.
func VerifyWebhook(secret string, header http.Header, body []byte) error {
	return VerifyWebhookAt(secret, header, body, time.Now(), WebhookTolerance)
}

// VerifyWebhookAt is VerifyWebhook at now with a tolerance of its own.
func VerifyWebhookAt(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	return webhooks.Verify(secret, header, body, tolerance, now)
}
