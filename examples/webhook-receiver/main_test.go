package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leadline/leadline/webhooks"
)

func TestReceiverVerifiesAndDropsDuplicates(t *testing.T) {
	secret := webhooks.NewSecret()
	var out bytes.Buffer
	h := handler(secret, &out)
	body := []byte(`{"id":"ev1","type":"message.classified","timestamp":"2026-11-23T10:00:00Z","data":{"intent":"interested"}}`)
	send := func(sig string) int {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		now := time.Now()
		req.Header.Set(webhooks.HeaderID, "d1")
		req.Header.Set(webhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		if sig == "" {
			sig = webhooks.Sign(secret, "d1", now, body)
		}
		req.Header.Set(webhooks.HeaderSignature, sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if c := send("v1,forged"); c != http.StatusUnauthorized {
		t.Fatalf("forged signature: %d", c)
	}
	if c := send(""); c != http.StatusOK {
		t.Fatalf("signed delivery: %d", c)
	}
	if c := send(""); c != http.StatusOK {
		t.Fatalf("retried delivery: %d", c)
	}
	if n := strings.Count(out.String(), "message.classified"); n != 1 {
		t.Fatalf("printed %d times, want once:\n%s", n, out.String())
	}
}
