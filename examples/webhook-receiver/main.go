// Command webhook-receiver is a runnable receiver of leadline webhooks: it
// verifies each delivery's signature and timestamp with client.VerifyWebhook,
// drops a delivery id it has already handled (leadline retries until it
// gets a 2xx, so a receiver sees some deliveries more than once), and
// prints each event.
//
//	LEADLINE_WEBHOOK_SECRET=whsec_… go run ./examples/webhook-receiver --addr 127.0.0.1:8090
//
// leadline delivers only to https endpoints on public addresses: put the
// receiver behind a TLS-terminating proxy or tunnel, or give it a
// certificate with --cert and --key. During development, `leadline serve
// --webhooks-allow-private` lets a local receiver be reached.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/leadline/leadline/client"
)

// seen remembers handled delivery ids for a day (leadline's retries end
// after about 30 minutes; a replay has a new id).
type seen struct {
	mu  sync.Mutex
	ids map[string]time.Time
}

// first reports whether id is new, and remembers it.
func (s *seen) first(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, at := range s.ids {
		if now.Sub(at) > 24*time.Hour {
			delete(s.ids, k)
		}
	}
	if _, ok := s.ids[id]; ok {
		return false
	}
	s.ids[id] = now
	return true
}

// handler verifies, drops duplicates and prints each event to out.
func handler(secret string, out io.Writer) http.Handler {
	handled := &seen{ids: map[string]time.Time{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := client.VerifyWebhook(secret, r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		id := r.Header.Get(client.WebhookIDHeader)
		if !handled.first(id, time.Now()) {
			w.WriteHeader(http.StatusOK) // a retry of a delivery already handled
			return
		}
		var ev struct {
			ID       string         `json:"id"`
			Type     string         `json:"type"`
			Data     map[string]any `json:"data"`
			Replayed bool           `json:"replayed"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(out, "%s %s event=%s replayed=%t data=%v\n", id, ev.Type, ev.ID, ev.Replayed, ev.Data)
		w.WriteHeader(http.StatusOK)
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	cert := flag.String("cert", "", "TLS certificate file (serve https)")
	key := flag.String("key", "", "TLS key file")
	flag.Parse()
	secret := os.Getenv("LEADLINE_WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("set LEADLINE_WEBHOOK_SECRET to the webhook's secret (whsec_…), shown when it was created")
	}
	http.Handle("POST /", handler(secret, os.Stdout))
	log.Printf("receiving leadline webhooks on %s", *addr)
	if *cert != "" {
		log.Fatal(http.ListenAndServeTLS(*addr, *cert, *key, nil))
	}
	log.Fatal(http.ListenAndServe(*addr, nil))
}
