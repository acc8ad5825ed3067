-- A client's tasks (a client viewer's task list, GET /v1/tasks?client_id=…)
-- are read in due order from an index of their own: the list no longer
-- walks every task of the workspace and reads each one's row to find its
-- client. (Without status in it: a list of every client's tasks by status
-- keeps reading tasks_status_due or tasks_assignee.)
CREATE INDEX tasks_client ON tasks (workspace_id, client_id, due_at, id);
