package apikit

import "fmt"

// Paging defaults and bounds shared by every list.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// Page is one page of a list, in the envelope every list answers with.
type Page[T any] struct {
	Data    []T  `json:"data"`
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"has_more"`
}

// NewPage builds a page, never with a nil Data (an empty list is []).
func NewPage[T any](data []T, total, limit, offset int) Page[T] {
	if data == nil {
		data = []T{}
	}
	return Page[T]{Data: data, Total: total, Limit: limit, Offset: offset, HasMore: offset+len(data) < total}
}

// CheckPage applies the default limit to a zero limit and checks limit and
// offset against the bounds every list shares.
// Returns E_PAYLOAD_INVALID for a limit or offset out of bounds.
func CheckPage(limit *int, offset int) error {
	if *limit == 0 {
		*limit = DefaultLimit
	}
	if *limit < 1 || *limit > MaxLimit {
		return Invalid(fmt.Sprintf("limit must be between 1 and %d.", MaxLimit), "Use a limit from 1 to 200 and page with offset.")
	}
	if offset < 0 {
		return Invalid("offset must be 0 or more.", "Use an offset of 0 or more.")
	}
	return nil
}

// CheckClientFilter refuses a client filter outside a scoped principal's
// clients.
// Returns E_FORBIDDEN when p may not see clientID.
func CheckClientFilter(p Principal, clientID string) error {
	if clientID != "" && !p.SeesClient(clientID) {
		return Forbidden("This key is limited to other clients.", "Filter by one of the clients in GET /v1/me, or leave client_id out.")
	}
	return nil
}
