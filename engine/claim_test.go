package engine

import (
	"testing"

	"github.com/leadline/leadline/enrollments"
	"github.com/matryer/is"
)

// TestPartitionKeepsSendersTogether: enrollments that share a sender, their
// LinkedIn one or their mailbox, go to the same worker, and the groups of
// senders are spread over the workers by size, the largest first.
func TestPartitionKeepsSendersTogether(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := func(id, sender, mailbox string) enrollments.Enrollment {
		x := enrollments.Enrollment{ID: id}
		if sender != "" {
			x.SenderID = &sender
		}
		if mailbox != "" {
			x.EmailSenderID = &mailbox
		}
		return x
	}
	claimed := []enrollments.Enrollment{
		e("01", "anna", "m1"), e("02", "ben", "m1"), e("03", "anna", ""), e("04", "carl", "m2"),
		e("05", "", "m2"), e("06", "", ""), e("07", "", ""), e("08", "", ""), e("09", "", ""),
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
	// anna, ben and mailbox m1 are one group of three; carl and m2 one of
	// two, the enrollment with only the mailbox m2 in it; the four with no
	// sender one of four.
	is.Equal(worker["01"], worker["02"])
	is.Equal(worker["01"], worker["03"])
	is.Equal(worker["04"], worker["05"])
	for _, id := range []string{"07", "08", "09"} {
		is.Equal(worker[id], worker["06"])
	}
	// Three groups, three workers: one each.
	is.True(worker["01"] != worker["04"] && worker["01"] != worker["06"] && worker["04"] != worker["06"])
	is.Equal(partition(claimed, 1)[0], claimed)
}
