package workspace

// HashPassword lets the tests store a hash as an older version did.
var HashPassword = hashPassword
