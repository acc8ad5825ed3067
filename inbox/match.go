package inbox

import (
	"context"
	"strings"

	"github.com/uptrace/bun"

	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/senders"
)

// maxEarlier bounds the messages a continued email refers to.
const maxEarlier = 20

// Earlier returns what sender s sent the lead before in its conversation,
// when the conversation's latest sequence is sequenceID: the provider ids
// of the sent messages, oldest first, and the first subject. A transport
// that threads continues it (In-Reply-To and References, the same chat).
func (svc *Service) Earlier(ctx context.Context, s *senders.Sender, leadID, sequenceID string) (senders.Thread, error) {
	th, err := svc.store.Thread(ctx, s.WorkspaceID, s.ID, leadID, s.Channel)
	if err != nil || th == nil || th.SequenceID == nil || *th.SequenceID != sequenceID {
		return senders.Thread{}, err
	}
	msgs, err := svc.store.SentIDs(ctx, th.ID, maxEarlier)
	if err != nil {
		return senders.Thread{}, err
	}
	var out senders.Thread
	for _, m := range msgs {
		if m.ProviderMessageID == nil {
			continue
		}
		out.Earlier = append(out.Earlier, *m.ProviderMessageID)
		if out.Subject == "" && m.Subject != nil {
			out.Subject = *m.Subject
		}
	}
	return out, nil
}

// continued is the conversation a member's reply continues: every message
// of the thread with a provider id, both ways, oldest first (the latest
// maxEarlier), and the first subject.
func continued(msgs []Message) senders.Thread {
	var out senders.Thread
	for _, m := range msgs {
		if m.ProviderMessageID == nil || m.Status != Sent {
			continue
		}
		out.Earlier = append(out.Earlier, *m.ProviderMessageID)
		if out.Subject == "" && m.Subject != nil {
			out.Subject = *m.Subject
		}
	}
	if len(out.Earlier) > maxEarlier {
		out.Earlier = out.Earlier[len(out.Earlier)-maxEarlier:]
	}
	return out
}

// LeadBySent returns the lead a message answers: the lead of the thread
// holding one of the workspace's sent messages among ids (Message-IDs
// with or without angle brackets), or "" when none is leadline's.
func (svc *Service) LeadBySent(ctx context.Context, workspaceID string, ids []string) (string, error) {
	var clean []string
	for _, id := range ids {
		if id = strings.Trim(strings.TrimSpace(id), "<>"); id != "" && len(clean) < maxEarlier {
			clean = append(clean, id)
		}
	}
	if len(clean) == 0 {
		return "", nil
	}
	return svc.store.LeadBySent(ctx, workspaceID, clean)
}

// LeadByConversation returns the lead that s wrote to in a provider's
// conversation: the lead of s's thread holding one of its sent messages in
// that conversation (senders.ConversationPrefix), or "" when s sent
// nothing there.
func (svc *Service) LeadByConversation(ctx context.Context, s *senders.Sender, conversation string) (string, error) {
	if conversation == "" {
		return "", nil
	}
	return svc.store.LeadByConversation(ctx, s.WorkspaceID, s.ID, senders.ConversationPrefix(conversation))
}

// LeadByConversation returns the lead of the sender's thread holding a
// sent message whose provider id starts with prefix, or "": a range on
// the index of the workspace's provider message ids.
func (b *BunStore) LeadByConversation(ctx context.Context, workspaceID, senderID, prefix string) (string, error) {
	var lead string
	err := b.db.IDB(ctx).NewSelect().TableExpr("messages AS m").Join("JOIN threads AS th ON th.id = m.thread_id").
		ColumnExpr("th.lead_id").
		Where("m.workspace_id = ? AND m.provider_message_id >= ? AND m.provider_message_id < ? AND m.direction = ? AND th.sender_id = ?",
			workspaceID, prefix, prefixEnd(prefix), Out, senderID).
		Limit(1).Scan(ctx, &lead)
	if db.IsNoRows(err) {
		return "", nil
	}
	return lead, err
}

// prefixEnd is the least string above every string that starts with
// prefix (prefix ends in an ASCII character below DEL).
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	b[len(b)-1]++
	return string(b)
}

// Thread returns the thread of sender, lead and channel, or nil.
func (b *BunStore) Thread(ctx context.Context, workspaceID, senderID, leadID string, ch senders.Channel) (*Thread, error) {
	th := new(Thread)
	err := b.db.IDB(ctx).NewSelect().Model(th).
		Where("th.sender_id = ? AND th.lead_id = ? AND th.channel = ? AND th.workspace_id = ?", senderID, leadID, ch, workspaceID).Scan(ctx)
	if db.IsNoRows(err) {
		return nil, nil
	}
	return th, err
}

// SentIDs returns a thread's sent messages with a provider id, oldest
// first.
func (b *BunStore) SentIDs(ctx context.Context, threadID string, limit int) ([]Message, error) {
	var out []Message
	err := b.db.IDB(ctx).NewSelect().Model(&out).Column("provider_message_id", "subject").
		Where("m.thread_id = ? AND m.direction = ? AND m.provider_message_id IS NOT NULL", threadID, Out).
		OrderExpr("m.sent_at, m.id").Limit(int64(limit)).Scan(ctx)
	return out, err
}

// LeadBySent returns the lead of the thread holding one of the
// workspace's sent messages with a provider id among ids, or "".
func (b *BunStore) LeadBySent(ctx context.Context, workspaceID string, ids []string) (string, error) {
	var lead string
	err := b.db.IDB(ctx).NewSelect().TableExpr("messages AS m").Join("JOIN threads AS th ON th.id = m.thread_id").
		ColumnExpr("th.lead_id").
		Where("m.workspace_id = ? AND m.provider_message_id IN (?) AND m.direction = ?", workspaceID, bun.In(ids), Out).
		Limit(1).Scan(ctx, &lead)
	if db.IsNoRows(err) {
		return "", nil
	}
	return lead, err
}
