package email_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/internal/mailtest"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

// BenchmarkSendThroughPostfix sends emails from one sender through the
// local Postfix (each with its pending copy in Dovecot's sent folder and
// the mark cleared), as the runner does; the goal is 50 a second.
func BenchmarkSendThroughPostfix(b *testing.B) {
	box, to := mailtest.Mailbox(b), mailtest.Mailbox(b)
	ctx := context.Background()
	tr := email.New(email.Config{Credentials: creds, Clock: apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)),
		PublicURL: "https://leadline.example.test", Token: func(ws, lead string) (string, error) { return "t", nil }})
	defer tr.Close()
	s := mailSender(box)
	lead := senders.Recipient{LeadID: "lead-1", Name: "Ann Lee", Email: to.Address}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := tr.Perform(ctx, senders.Request{Key: fmt.Sprintf("bench-%d", i), Sender: s, Action: senders.SendEmail, Lead: lead,
			Subject: "Quick question", Body: "Hi Ann,\n\nA short note.\n\nDana", Purpose: senders.PurposeSequence})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "emails/s")
}

// BenchmarkSendThroughPostfixSenders sends as a process does with the
// runner's workers: eight senders at once, each with its connections.
func BenchmarkSendThroughPostfixSenders(b *testing.B) {
	ctx := context.Background()
	tr := email.New(email.Config{Credentials: creds, Clock: apikit.NewFakeClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))})
	defer tr.Close()
	to := mailtest.Mailbox(b)
	boxes := make(chan mailtest.Box, 64)
	for range cap(boxes) {
		boxes <- mailtest.Mailbox(b)
	}
	var n atomic.Int64
	b.SetParallelism(4) // 4 × GOMAXPROCS senders
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		s := mailSender(<-boxes)
		for pb.Next() {
			i := n.Add(1)
			_, err := tr.Perform(ctx, senders.Request{Key: fmt.Sprintf("bench-%d", i), Sender: s, Action: senders.SendEmail,
				Lead: senders.Recipient{LeadID: "lead-1", Email: to.Address}, Subject: "Quick question", Body: "Hi,\n\nA short note.", Purpose: senders.PurposeSequence})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "emails/s")
}
