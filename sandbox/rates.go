package sandbox

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/leadline/leadline/senders"
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

// VariantRate is what one step's variant is answered at: a share of
// invitations accepted and of messages answered, each only when set.
type VariantRate struct {
	Accept, Reply *float64
}

// ParseVariantRate reads one `leadline simulate --variant-rate` value,
// STEP/VARIANT=reply:0.10,accept:0.40, into into (by "STEP/VARIANT").
func ParseVariantRate(text string, into map[string]VariantRate) error {
	key, spec, ok := strings.Cut(text, "=")
	step, variant, ok2 := strings.Cut(strings.TrimSpace(key), "/")
	if !ok || !ok2 || strings.TrimSpace(step) == "" || strings.TrimSpace(variant) == "" || strings.TrimSpace(spec) == "" {
		return fmt.Errorf("--variant-rate: %q is not STEP/VARIANT=reply:0.10,accept:0.40", text)
	}
	k := strings.TrimSpace(step) + "/" + strings.TrimSpace(variant)
	r := into[k]
	for part := range strings.SplitSeq(spec, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), ":")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !ok || err != nil || v < 0 || v > 1 {
			return fmt.Errorf("--variant-rate: %q is not name:share with a share between 0 and 1 (reply:0.10)", part)
		}
		switch strings.TrimSpace(name) {
		case "accept":
			r.Accept = &v
		case "reply":
			r.Reply = &v
		default:
			return fmt.Errorf("--variant-rate: %q is not accept or reply", name)
		}
	}
	into[k] = r
	return nil
}

// rateOf is the chance of outcome ("accept" or "reply") for req: its
// step's variant's own, when Rates.Variants sets one, else the network's.
func (n *Network) rateOf(req senders.Request, outcome string) float64 {
	r, ok := n.rates.Variants[req.StepID+"/"+req.VariantID]
	switch outcome {
	case "accept":
		if ok && r.Accept != nil {
			return *r.Accept
		}
		return n.rates.Accept
	default:
		if ok && r.Reply != nil {
			return *r.Reply
		}
		return n.rates.Reply
	}
}
