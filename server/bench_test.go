package server

import (
	"fmt"
	"testing"

	"github.com/leadline/leadline/internal/dbtest"
)

// BenchmarkHTTPLeads measures the leads operations through the whole HTTP
// stack (auth, rate limit, huma, service, store) on each engine.
func BenchmarkHTTPLeads(b *testing.B) {
	for _, eng := range dbtest.Engines() {
		e := newEnv(b, dbtest.Open(b, eng), RateLimits{Read: 1 << 30, Write: 1 << 30, Spend: 1 << 30})
		var id string
		for i := range 2000 {
			id = e.lead("member", map[string]any{"linkedin_id": fmt.Sprintf("H%05d", i), "name": fmt.Sprintf("Person %d", i), "company": "Contoso"})["id"].(string)
		}
		for _, c := range []struct{ name, method, path string }{
			{"list", "GET", "/v1/leads"},
			{"list-q", "GET", "/v1/leads?q=person%201"},
			{"get", "GET", "/v1/leads/" + id},
		} {
			b.Run(string(eng)+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					if r := e.call(c.method, c.path, "viewer", nil); r.Status != 200 {
						b.Fatal(r.Status)
					}
				}
			})
		}
		b.Run(string(eng)+"/upsert", func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if r := e.call("POST", "/v1/leads", "member", map[string]any{"linkedin_id": fmt.Sprintf("H%05d", i%2000), "headline": fmt.Sprint(i)}); r.Status != 200 {
					b.Fatal(r.Status)
				}
			}
		})
	}
}
