package apikit

import "github.com/google/uuid"

// NewID returns a new UUIDv7: time-ordered, so ids sort in creation order
// within one process and roughly so across processes.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// ValidID reports whether s is a uuid in its canonical text form.
func ValidID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}
