package apikit

import (
	"strings"
	"unicode/utf8"
)

// Storable reports whether every string in v (a string, or JSON-shaped maps
// and slices of them, keys included) can be stored by both databases: valid
// UTF-8 without NUL characters, which Postgres refuses in text and jsonb.
func Storable(v any) bool {
	switch x := v.(type) {
	case string:
		return utf8.ValidString(x) && !strings.ContainsRune(x, 0)
	case *string:
		return x == nil || Storable(*x)
	case []string:
		for _, s := range x {
			if !Storable(s) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !Storable(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range x {
			if !Storable(k) || !Storable(e) {
				return false
			}
		}
	}
	return true
}

// Deref returns *s, or "" for nil: the value of an optional text field.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
