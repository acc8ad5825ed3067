package client_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leadline/leadline/client"
	"github.com/leadline/leadline/webhooks"
)

func TestVerifyWebhook(t *testing.T) {
	is := is.New(t)
	secret := webhooks.NewSecret()
	body := []byte(`{"id":"ev1","type":"lead.created","data":{}}`)
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set(client.WebhookIDHeader, "d1")
	h.Set(client.WebhookTimestampHeader, strconv.FormatInt(at.Unix(), 10))
	h.Set(client.WebhookSignatureHeader, "v1,old "+webhooks.Sign(secret, "d1", at, body))

	is.NoErr(client.VerifyWebhookAt(secret, h, body, at.Add(time.Minute), client.WebhookTolerance))
	is.True(errors.Is(client.VerifyWebhookAt(secret, h, []byte(`{"id":"ev2"}`), at, client.WebhookTolerance), client.ErrWebhookBadSignature))
	is.True(errors.Is(client.VerifyWebhookAt(webhooks.NewSecret(), h, body, at, client.WebhookTolerance), client.ErrWebhookBadSignature))
	is.True(errors.Is(client.VerifyWebhookAt(secret, h, body, at.Add(time.Hour), client.WebhookTolerance), client.ErrWebhookStale))
	is.True(errors.Is(client.VerifyWebhook(secret, http.Header{}, body), client.ErrWebhookUnsigned))
}
