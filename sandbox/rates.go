package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRates reads outcome chances over base, as `leadline simulate
// --rates` takes them: comma-separated name=value pairs, each a share
// between 0 and 1, of accept, reply, auto_reply and bounce
// ("bounce=0.08,accept=0.05"). An empty text is base.
func ParseRates(text string, base Rates) (Rates, error) {
	out := base
	for part := range strings.SplitSeq(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !ok || err != nil || v < 0 || v > 1 {
			return base, fmt.Errorf("--rates: %q is not name=share with a share between 0 and 1 (bounce=0.08)", part)
		}
		switch strings.TrimSpace(name) {
		case "accept":
			out.Accept = v
		case "reply":
			out.Reply = v
		case "auto_reply":
			out.AutoReply = v
		case "bounce":
			out.Bounce = v
		default:
			return base, fmt.Errorf("--rates: %q is not one of accept, reply, auto_reply and bounce", name)
		}
	}
	return out, nil
}
