package benchkit

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/workspace"
)

// What the seeded leads are made of: first names, syllables for last
// names and company stems, company suffixes, titles, cities and sources.
var (
	FirstNames = []string{"Anna", "Ben", "Clara", "David", "Elif", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Lars", "Mona", "Nils", "Olga",
		"Paul", "Rosa", "Sami", "Tara", "Uwe", "Vera", "Wim", "Yara", "Zeno", "Amir", "Bianca", "Carlos", "Dana", "Emil", "Fatima",
		"Gustav", "Hana", "Ivan", "Julia", "Karim", "Lea", "Marco", "Nora", "Omar", "Pia", "Raj", "Sofia", "Tomas", "Ulla", "Viktor",
		"Wanda", "Xavier", "Yusuf", "Zoe", "Aiko", "Bruno", "Chloe", "Dmitri", "Eva", "Filip", "Gia", "Hans", "Ida", "Jakob", "Kaja"}
	syllables = []string{"ka", "lo", "mi", "ren", "sto", "va", "ber", "tan", "ol", "ric", "del", "mar", "no", "sel", "vik",
		"ha", "ju", "pe", "ras", "ton", "li", "sa", "gor", "en", "ki", "mu", "da", "fel", "zo", "bri"}
	Suffixes = []string{" GmbH", " Ltd", " SAS", " Inc", " Labs", " Group", " AG"}
	Titles   = []string{"CTO", "VP Engineering", "CFO", "Head of Sales", "Founder & CEO", "Director of Operations", "Head of Growth", "Engineering Manager", "Software Engineer", "Account Executive"}
	Cities   = []string{"Berlin", "Paris", "London", "Munich", "Lyon", "Manchester", "Madrid", "Milan"}
	Sources  = []string{"csv-import", "sales-navigator", "event", "website", "referral"}
)

// Word joins n random syllables into a capitalised word: 27,000 last
// names and 900 company stems, so names spread as they do in real data.
func Word(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(syllables[rng.IntN(len(syllables))])
	}
	w := b.String()
	return strings.ToUpper(w[:1]) + w[1:]
}

// SeedLeads inserts leads from..n-1 of the workspace in batches,
// bypassing the service so that a million leads take minutes, not hours.
// The rows are what the service would write (no events: a seeded lead
// has no history): lead i has LinkedIn id LI%08d (i), the i-th client of
// cat round-robin, a random stage, a work email for 70%, a list for half.
// tagged is the percentage of leads that get one of cat's tags (the
// lead_counts triggers keep the totals as for any insert).
func SeedLeads(ctx context.Context, d *db.DB, wsID string, cat workspace.Catalog, from, n, tagged int) error {
	rng := rand.New(rand.NewPCG(2026, uint64(from)))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	now := time.Now().UTC().Truncate(time.Microsecond)
	const batch = 1000
	type leadTag struct {
		LeadID    string    `bun:"lead_id"`
		TagID     string    `bun:"tag_id"`
		CreatedAt time.Time `bun:"created_at"`
	}
	for start := from; start < n; start += batch {
		rows := make([]leads.Lead, 0, batch)
		var tags []leadTag
		for i := start; i < min(start+batch, n); i++ {
			f, l, c := pick(FirstNames), Word(rng, 3), Word(rng, 2)+pick(Suffixes)
			s := func(v string) *string { return &v }
			lead := leads.Lead{
				ID: apikit.NewID(), WorkspaceID: wsID,
				ClientID: &cat.Clients[i%len(cat.Clients)].ID, StageID: &cat.Stages[rng.IntN(len(cat.Stages))].ID,
				LinkedInID: s(fmt.Sprintf("LI%08d", i)), PublicIdentifier: s(strings.ToLower(fmt.Sprintf("%s-%s-%d", f, l, i))),
				Name: s(f + " " + l), Company: s(c), Headline: s(pick(Titles) + " at " + c), Location: s(pick(Cities)),
				Source: s(pick(Sources)), Custom: map[string]any{"seed": i}, CreatedAt: now, UpdatedAt: now,
			}
			if rng.IntN(10) < 7 {
				lead.EmailWork = s(fmt.Sprintf("%s.%s.%d@%s.test", strings.ToLower(f), strings.ToLower(l), i, strings.ToLower(strings.Fields(c)[0])))
			}
			if rng.IntN(2) == 0 {
				lead.ListID = &cat.Lists[rng.IntN(len(cat.Lists))].ID
			}
			if tagged > 0 && len(cat.Tags) > 0 && rng.IntN(100) < tagged {
				tags = append(tags, leadTag{lead.ID, cat.Tags[rng.IntN(len(cat.Tags))].ID, now})
			}
			rows = append(rows, lead)
		}
		if err := d.InTx(ctx, func(ctx context.Context) error {
			if _, err := d.IDB(ctx).NewInsert().Model(&rows).Exec(ctx); err != nil {
				return err
			}
			if len(tags) == 0 {
				return nil
			}
			_, err := d.IDB(ctx).NewInsert().Model(&tags).ModelTableExpr("lead_tags").Exec(ctx)
			return err
		}); err != nil {
			return err
		}
		if (start/batch)%100 == 0 {
			log.Printf("seeded %d/%d", start+len(rows), n)
		}
	}
	return nil
}
