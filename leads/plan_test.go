package leads_test

import (
	"fmt"
	"testing"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/leads"
)

// TestLookupsUseIndexes explains every query that matching, lookups and
// do-not-contact checks send, on both engines, and fails when one scans
// the leads table or walks a whole workspace. These queries run inside
// write transactions: a scan there queues every other write behind it.
func TestLookupsUseIndexes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		b := setup(t, d)
		rec := dbtest.Record(d)
		var ids []string
		for i := 0; i < 40; i++ {
			res, err := b.svc.Upsert(b.ctx, b.p, leads.LeadInput{
				LinkedInID: str(fmt.Sprintf("li-%d", i)), ProviderID: str(fmt.Sprintf("pr-%d", i)),
				EmailWork: str(fmt.Sprintf("w%d@corp.test", i)), EmailPersonal: str(fmt.Sprintf("p%d@home.test", i)),
				PublicIdentifier: str(fmt.Sprintf("pub-%d", i)), Name: str("Lead"), Company: str("Corp"), Source: str("csv"),
			})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Lead.ID)
		}
		must := func(_ any, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		queries := rec.During(func() {
			// Matching on each identity, alone, so that each is looked up.
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str("li-1"), Headline: str("h")}))
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{ProviderID: str("pr-2"), Headline: str("h")}))
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailWork: str("W3@corp.test"), Headline: str("h")}))
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{EmailPersonal: str("P4@home.test"), Headline: str("h")}))
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{PublicIdentifier: str("pub-5"), Headline: str("h")}))
			// A new lead with every identity: no match on any, then the
			// do-not-contact and blacklist checks.
			must(b.svc.Upsert(b.ctx, b.p, leads.LeadInput{LinkedInID: str("li-new"), ProviderID: str("pr-new"),
				EmailWork: str("new@corp.test"), EmailPersonal: str("new@home.test"), PublicIdentifier: str("pub-new"), Company: str("Corp")}))
			// Filling identities checks that no other lead holds them.
			must(b.svc.Patch(b.ctx, b.p, ids[6], leads.LeadInput{LinkedInID: str("li-6b"), ProviderID: str("pr-6b")}))
			must(b.svc.Get(b.ctx, b.p, ids[7]))
			for _, f := range []leads.Filter{{Email: "W8@corp.test"}, {Email: "p9@home.test"}, {PublicIdentifier: "pub-10"}, {Source: "csv"}} {
				f.Limit = 50
				must(b.svc.List(b.ctx, b.p, f))
			}
			must(b.svc.AddSuppressions(b.ctx, b.p, leads.SuppressionsInput{Emails: []string{"w11@corp.test", "P12@home.test"},
				LinkedInIDs: []string{"li-13"}, PublicIdentifiers: []string{"pub-14"}, LeadIDs: ids[15:17]}))
			must(b.svc.Enrich(b.ctx, b.p, leads.EnrichInput{LeadIDs: ids[17:20]}))
		})
		dbtest.AssertNoScan(t, d, "leads", "leads_ws", queries)
	})
}
