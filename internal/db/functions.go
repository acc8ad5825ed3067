package db

import (
	"database/sql/driver"
	"strings"

	"modernc.org/sqlite"
)

// FoldFunc is the SQLite function that lower-cases text by Unicode rules.
// SQLite's own lower() and LIKE fold ASCII letters only, so a search for
// "ле" would miss "Лев"; Postgres's ILIKE folds every letter. Queries that
// compare text case-insensitively on SQLite fold both sides with it.
const FoldFunc = "ll_fold"

func init() {
	err := sqlite.RegisterDeterministicScalarFunction(FoldFunc, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		default:
			return v, nil
		}
	})
	if err != nil {
		panic("register " + FoldFunc + ": " + err.Error())
	}
}

// LikePattern turns q into a LIKE pattern (with ESCAPE '\') matching it as
// a substring.
func LikePattern(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(q) + "%"
}
