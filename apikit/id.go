package apikit

import "github.com/google/uuid"

// NewID returns a new UUIDv7: time-ordered, so ids sort in creation order
// within one process and roughly so across processes.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// IDPattern is the one form of id leadline takes, in paths, queries and
// bodies alike: a uuid in its canonical lower-case text form, as leadline
// writes ids. Braces, a urn:uuid: prefix, bare hex or upper case are
// refused rather than read, so that every engine answers one id alike.
const IDPattern = `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`

// ValidID reports whether s is an id in the form IDPattern describes.
func ValidID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
