package benchkit

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sync"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
)

// Statements counts the statements a database runs, by their text with
// the literals taken out: what a load spends its round trips on, where
// Postgres' own statement statistics are not loaded.
type Statements struct {
	mu sync.Mutex
	n  map[string]int
}

var literals = regexp.MustCompile(`'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b`)

// CountStatements has d count every statement it runs from now on.
func CountStatements(d *db.DB) *Statements {
	s := &Statements{n: map[string]int{}}
	d.AddQueryHook(s)
	d.OnPrepared(s.saw)
	return s
}

func (s *Statements) saw(query string) {
	q := literals.ReplaceAllString(query, "?")
	if len(q) > 300 {
		q = q[:300] + "…"
	}
	s.mu.Lock()
	s.n[q]++
	s.mu.Unlock()
}

// BeforeQuery implements bun.QueryHook.
func (s *Statements) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery implements bun.QueryHook.
func (s *Statements) AfterQuery(_ context.Context, e *bun.QueryEvent) { s.saw(e.Query) }

// Write writes the counts, the most run first, and their total.
func (s *Statements) Write(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	type row struct {
		q string
		n int
	}
	var rows []row
	total := 0
	for q, n := range s.n {
		rows = append(rows, row{q, n})
		total += n
	}
	slices.SortFunc(rows, func(a, b row) int { return b.n - a.n })
	if _, err := fmt.Fprintf(w, "%d statements\n", total); err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%8d  %s\n", r.n, r.q); err != nil {
			return err
		}
	}
	return nil
}
