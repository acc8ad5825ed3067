package apikit

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
