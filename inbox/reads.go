package inbox

import "github.com/leadline/leadline/internal/db"

// Read views: what other areas may read of the inbox's tables, and no
// more than the functions here name: the inbox area owns their shape.

// LeadAssignee is a read view for another area's statement on d: the SQL
// expression of the member who owns the conversation with a lead, or NULL:
// the assignee of the lead's most recently active thread that has one.
// lead is an SQL expression (a column, or ? for an argument). It reads
// the lead's few threads through their lead_id index (a lead id names one
// workspace's lead), never a workspace's threads by activity.
func LeadAssignee(d *db.DB, lead string) string {
	return "(SELECT th.assignee_id FROM " + d.IndexedBy("threads AS th", "threads_lead") + " WHERE th.lead_id = " + lead +
		" AND th.assignee_id IS NOT NULL ORDER BY th.last_message_at DESC, th.id DESC LIMIT 1)"
}
