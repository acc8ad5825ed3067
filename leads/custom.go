package leads

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/leadline/leadline/apikit"
)

// Bounds of a lead's stored custom fields. They hold for the custom object
// as stored after every merge, not only for one request, so that no series
// of updates can grow a lead past what every page and answer carries well.
const (
	// MaxCustomKeys is how many custom fields a lead keeps.
	MaxCustomKeys = 100
	// MaxCustomKeyLength is how many characters a custom field's name has.
	MaxCustomKeyLength = 100
	// MaxCustomBytes is the size of a lead's custom object as JSON.
	MaxCustomBytes = 16 << 10
	// MaxCustomDepth is how deeply custom nests, counting custom itself:
	// {"a":{"b":1}} is 2 deep.
	MaxCustomDepth = 5
)

// checkCustomKeys checks the names of the custom fields a request sends.
func checkCustomKeys(c map[string]any) error {
	for k := range c {
		if strings.TrimSpace(k) == "" || utf8.RuneCountInString(k) > MaxCustomKeyLength {
			return apikit.Invalid(fmt.Sprintf("custom field name %q must have 1 to %d characters.", k, MaxCustomKeyLength),
				"Rename the custom field.")
		}
	}
	return nil
}

// checkCustom checks a lead's custom object as it would be stored.
func checkCustom(c map[string]any) error {
	if len(c) > MaxCustomKeys {
		return apikit.TooMany(fmt.Sprintf("The lead would have %d custom fields; a lead keeps at most %d.", len(c), MaxCustomKeys),
			"Remove custom fields you no longer need (send them as null) or combine them.")
	}
	if d := depth(c); d > MaxCustomDepth {
		return apikit.Invalid(fmt.Sprintf("custom nests %d levels deep; at most %d are allowed, counting custom itself.", d, MaxCustomDepth),
			"Flatten the nested values.")
	}
	b, err := json.Marshal(c)
	if err != nil {
		return apikit.Invalid("custom holds a value that is not JSON.", "Send JSON values only.")
	}
	if len(b) > MaxCustomBytes {
		return apikit.TooMany(fmt.Sprintf("The lead's custom fields would take %d bytes as JSON; a lead keeps at most %d.", len(b), MaxCustomBytes),
			"Keep large documents outside leadline and store a link or an id in custom.")
	}
	return nil
}

// depth is how deeply v nests: 0 for a scalar, 1 for a flat object or array.
func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
	default:
		return 0
	}
	return d + 1
}
