package enrollments

import (
	"testing"

	"github.com/matryer/is"
)

// TestPartitionKeepsSendersTogether: enrollments that share a sender, their
// LinkedIn one or their mailbox, go to the same worker, and the groups of
// senders are spread over the workers by size.
func TestPartitionKeepsSendersTogether(t *testing.T) {
	is := is.New(t)
	e := func(id, sender, mailbox string) Enrollment {
		x := Enrollment{ID: id}
		if sender != "" {
			x.SenderID = &sender
		}
		if mailbox != "" {
			x.EmailSenderID = &mailbox
		}
		return x
	}
	claimed := []Enrollment{
		e("1", "anna", "m1"), e("2", "ben", "m1"), e("3", "carl", "m2"),
		e("4", "dora", ""), e("5", "anna", ""), e("6", "", "m2"),
		e("7", "erik", ""), e("8", "erik", ""), e("9", "", ""),
	}
	parts := partition(claimed, 3)
	is.Equal(len(parts), 3)
	worker := map[string]int{}
	total := 0
	for w, part := range parts {
		for i, x := range part {
			worker[x.ID] = w
			if i > 0 {
				is.True(part[i-1].ID < x.ID) // the claimed order is kept
			}
		}
		total += len(part)
	}
	is.Equal(total, len(claimed))
	// anna, ben and mailbox m1 are one group; carl and m2 another.
	is.Equal(worker["1"], worker["2"])
	is.Equal(worker["1"], worker["5"])
	is.Equal(worker["3"], worker["6"])
	is.Equal(worker["7"], worker["8"])
	// The largest group (three enrollments) has a worker to itself.
	for _, id := range []string{"3", "4", "6", "7", "8", "9"} {
		is.True(worker[id] != worker["1"])
	}
	is.Equal(partition(claimed, 1)[0], claimed)
}
