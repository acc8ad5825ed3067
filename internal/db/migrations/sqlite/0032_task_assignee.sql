-- A task's assignee: the member whose to-do it is (null: nobody's). A
-- task step's task goes to the member who owns the conversation (the
-- lead's thread's assignee, else the member who enrolled the lead:
-- docs/DECISIONS.md); PUT /v1/tasks/{id}/assignee changes it.
ALTER TABLE tasks ADD COLUMN assignee_id TEXT REFERENCES members(id);
-- "My open tasks, the earliest due first": a member's open tasks in a
-- workspace, in the list's order (GET /v1/tasks?assignee_id=…&status=open).
CREATE INDEX tasks_assignee ON tasks (workspace_id, assignee_id, status, due_at, id);
