package inbox

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestEndpointClassifier(t *testing.T) {
	is := is.New(t)
	var answer atomic.Value
	answer.Store(`{"intent":"not_now","confidence":0.9}`)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer k-1" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "local" || len(req.Messages) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		switch a := answer.Load().(string); a {
		case "500":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "slow":
			time.Sleep(300 * time.Millisecond)
		default:
			json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": a}}}})
		}
	}))
	defer srv.Close()
	e := &Endpoint{URL: srv.URL, Key: "k-1", Model: "local", Timeout: 100 * time.Millisecond, Fallback: DefaultClassifier()}
	ctx := context.Background()
	read := func(body string) Classification {
		c, err := e.Classify(ctx, Incoming{Body: body, ReceivedAt: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)})
		is.NoErr(err)
		return c
	}

	c := read("Please remove me from your list.")
	is.Equal(c.Intent, NotNow) // the endpoint's answer
	is.Equal(c.Confidence, 0.9)

	answer.Store("```json\n{\"intent\": \"question\"}\n```")
	is.Equal(read("How much?").Intent, Question)

	answer.Store(`{"intent":"interested","confidence":0.4}`)
	c = read("Maybe")
	is.Equal(c.Intent, Unclear) // below the threshold
	is.True(c.Review)

	// Errors, timeouts and answers without an intent fall back to the model.
	for _, a := range []string{"500", "slow", `{"intent":"happy"}`, "no idea"} {
		answer.Store(a)
		c = read("Not interested, please remove me from your list.")
		is.Equal(c.Intent, NotInterested)
	}
	wrongKey := &Endpoint{URL: srv.URL, Key: "other", Model: "local", Fallback: DefaultClassifier()}
	c, err := wrongKey.Classify(ctx, Incoming{Body: "Not interested, please remove me from your list."})
	is.NoErr(err)
	is.Equal(c.Intent, NotInterested)

	// Machine evidence never goes to the endpoint.
	before := calls.Load()
	c, err = e.Classify(ctx, Incoming{Headers: map[string]string{"Auto-Submitted": "auto-replied"}, Body: "Back on Monday."})
	is.NoErr(err)
	is.True(c.AutoReply)
	is.Equal(calls.Load(), before)
}
