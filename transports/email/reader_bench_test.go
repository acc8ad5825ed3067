package email

import (
	"context"
	"fmt"
	"testing"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/dbtest"
	"github.com/leadline/leadline/internal/mailtest"
)

// BenchmarkReadFromDovecot reads b.N replies that wait in a Dovecot inbox
// into the durable inbound queue on SQLite: fetched, decoded, parsed and
// queued, as the reader does after a restart. The goal is 500 a second.
func BenchmarkReadFromDovecot(b *testing.B) {
	box := mailtest.Mailbox(b)
	d := dbtest.Open(b, db.SQLite)
	s := newSender(b, d, apikit.SystemClock{}, box.Address, boxIMAP(box, "PW"))
	raws := make([][]byte, b.N)
	for i := range raws {
		raws[i] = rawMail(fmt.Sprintf("lead%d@example.test", i), box.Address, fmt.Sprintf("r%d@example.test", i),
			"In-Reply-To: <sent-"+fmt.Sprint(i)+"@leadline.test>\r\n", "Thanks — let's talk on Thursday. Does 3pm work for you?")
	}
	box.Append(b, "INBOX", raws)
	r := NewReader(nil, engine.NewQueue(d, apikit.SystemClock{}), NewStates(d), mailtest.Secrets{"PW": mailtest.Password}, apikit.SystemClock{}, quiet)
	b.ResetTimer()
	n, err := r.Once(context.Background(), s)
	if err != nil {
		b.Fatal(err)
	}
	if n != b.N {
		b.Fatalf("queued %d of %d", n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "messages/s")
}
