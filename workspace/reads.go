package workspace

// What other areas read of the workspace's tables goes through the
// service (WorkspaceByID, Named, Lookup, Catalog, …) or, inside a
// statement that must stay one for its plan, through a read view this
// file names: the workspace area owns the shape of its tables.

// NamedRows is a read view for another area's statement: the table
// expression of the entries of kind (clients, stages, tags, lists) under
// alias, of which other areas read the columns id, workspace_id and name,
// and no other.
func NamedRows(kind Kind, alias string) string { return string(kind) + " AS " + alias }

// AuthVersion is a read view for another area's statement: the SQL
// expression of the authentication version of the workspace whose id is
// the SQL expression workspace (a column, or ? for an argument). The
// version rises whenever a key, member or client scope of the workspace
// changes; a workspace whose authentication never changed has 0.
func AuthVersion(workspace string) string {
	return "coalesce((SELECT av.version FROM auth_versions AS av WHERE av.workspace_id = " + workspace + "), 0)"
}

// ActiveMember is a read view for another area's statement: the SQL
// expression of member, itself an SQL expression of a member id (or
// NULL), when that member is active in their workspace, and NULL when
// they left (or when member is NULL). It reads one row by its key.
func ActiveMember(member string) string {
	return "(SELECT am.id FROM members AS am WHERE am.id = " + member + " AND am.active)"
}
