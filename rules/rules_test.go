package rules_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/sequences"
)

// TestRulesTakeTheInboxsIntents: the intents a sequence's on_reply takes
// are the inbox's, in its order: a new intent the inbox reads can be
// given a rule.
func TestRulesTakeTheInboxsIntents(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var names []string
	for _, i := range inbox.Intents {
		names = append(names, string(i))
	}
	is.Equal(sequences.ReplyIntents, names)
}
