package engine

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
)

// runBatch runs claimed enrollments and returns how many it ran. With more
// than one worker, each worker takes the enrollments of some senders (see
// partition), so that a sender's budget rows are written by one worker at
// a time.
func (r *Runner) runBatch(ctx context.Context, claimed []enrollments.Enrollment) (int, error) {
	workers := max(min(r.Workers, len(claimed)), 1)
	parts := partition(claimed, workers)
	size := max(r.Group, 1)
	var n atomic.Int64
	run := func(part []enrollments.Enrollment) error {
		for start := 0; start < len(part); start += size {
			group := part[start:min(start+size, len(part))]
			if err := r.runGroup(ctx, group); err != nil {
				return err
			}
			n.Add(int64(len(group)))
		}
		return nil
	}
	if workers == 1 {
		err := run(parts[0])
		return int(n.Load()), err
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i, part := range parts {
		wg.Go(func() { errs[i] = run(part) })
	}
	wg.Wait()
	return int(n.Load()), errors.Join(errs...)
}

// partition splits claimed enrollments between workers so that no two
// workers use the same sender: an enrollment uses its LinkedIn sender and
// its email sender, so senders that share an enrollment go to one worker
// together (the connected groups of senders), the largest groups first,
// each to the worker with the fewest enrollments yet. Otherwise two
// workers would queue on a shared mailbox's budget row, each holding it
// until its transaction commits. Each worker keeps the claimed order.
func partition(claimed []enrollments.Enrollment, workers int) [][]enrollments.Enrollment {
	parts := make([][]enrollments.Enrollment, workers)
	if workers == 1 {
		parts[0] = claimed
		return parts
	}
	parent := map[string]string{}
	var find func(x string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok || p == x {
			parent[x] = x
			return x
		}
		root := find(p)
		parent[x] = root
		return root
	}
	for _, c := range claimed {
		if c.SenderID == nil || c.EmailSenderID == nil {
			continue
		}
		a, b := find(*c.SenderID), find(*c.EmailSenderID)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	var roots []string
	members := map[string][]int{}
	for i, c := range claimed {
		// An enrollment with no LinkedIn sender goes with its mailbox;
		// one with no sender at all with the others that have none.
		root := find(cmp.Or(apikit.Deref(c.SenderID), apikit.Deref(c.EmailSenderID)))
		if _, seen := members[root]; !seen {
			roots = append(roots, root)
		}
		members[root] = append(members[root], i)
	}
	slices.SortStableFunc(roots, func(a, b string) int { return cmp.Compare(len(members[b]), len(members[a])) })
	owner := make([]int, len(claimed))
	load := make([]int, workers)
	for _, root := range roots {
		w := 0
		for i := range load {
			if load[i] < load[w] {
				w = i
			}
		}
		for _, i := range members[root] {
			owner[i] = w
		}
		load[w] += len(members[root])
	}
	for i, c := range claimed {
		parts[owner[i]] = append(parts[owner[i]], c)
	}
	return parts
}
