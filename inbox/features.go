package inbox

import (
	"math"
	"slices"
	"strings"
)

// modelDims is the number of hashed feature buckets of a model.
const modelDims = 1 << 18

// negationScope is how many words after a negator are read as negated.
var negationScope = 3

// cueWeight is how many times a cue counts.
var cueWeight = 3

// feature is one hashed feature of a message and its weight.
type feature struct {
	idx uint32
	val float32
}

// readable is the part of a body the model reads: the reply's new text,
// without what it quotes, its signature and disclaimers (Clean).
func readable(body string) string { return Clean(body) }

// features turns a reply into hashed features: word unigrams and bigrams
// of the folded text (lower case, no accents), character 3- to 5-grams
// inside each word, the subject's words, whether the reply asks ("?") or
// exclaims ("!"), and its length in words. The vector has unit length.
func features(subject, body string) []feature {
	text := fold(body)
	toks := strings.Fields(text)
	hs := make([]uint32, 0, 16*len(toks)+8)
	add := func(parts ...string) {
		hs = append(hs, hash(parts...))
	}
	for i, t := range toks {
		add("w", t)
		if i > 0 {
			add("b", toks[i-1], t)
		}
		w := "<" + t + ">"
		if len(w) > 40 {
			continue // a URL or a token no reply repeats
		}
		for n := 3; n <= 5; n++ {
			for j := 0; j+n <= len(w); j++ {
				add("c", w[j:j+n])
			}
		}
	}
	if len(toks) > 0 {
		add("b", "^", toks[0])
		add("b", toks[len(toks)-1], "$")
	}
	// Negation: the words after a negator, as negated words.
	for i, t := range toks {
		if negators[t] {
			for j := i + 1; j < len(toks) && j <= i+negationScope; j++ {
				add("g", toks[j])
			}
		}
	}
	// Cues that mean the same in every language, weighted up.
	var cueHashes []uint32
	cue := func(name string) { cueHashes = append(cueHashes, hash("k", name)) }
	var hits, negs [maxCues]bool
	hit, neg := hits[:len(cues)], negs[:len(cues)]
	cueIdx.match(text, hit, neg)
	for i := range hit {
		if hit[i] {
			cue(cues[i].name)
		}
		if neg[i] {
			cue("not " + cues[i].name)
		}
	}
	lower := strings.ToLower(body)
	if clock.MatchString(lower) {
		cue("clock")
	}
	if weekdayCue.in(text) {
		cue("day")
	}
	if strings.Contains(body, "@") {
		cue("email")
	}
	if strings.Contains(lower, "http") || strings.Contains(lower, ".test/") || strings.Contains(lower, ".com/") {
		cue("link")
	}
	if strings.HasSuffix(strings.TrimSpace(body), "?") {
		cue("asks-last")
	}
	for range cueWeight {
		hs = append(hs, cueHashes...)
	}
	for _, t := range strings.Fields(fold(subject)) {
		add("s", t)
	}
	if strings.ContainsAny(body, "?¿") {
		add("q")
	}
	if strings.ContainsAny(body, "!¡") {
		add("x")
	}
	add("n", lengthBucket(len(toks)))
	slices.Sort(hs)
	out := make([]feature, 0, len(hs))
	var norm float64
	for i := 0; i < len(hs); {
		j := i
		for j < len(hs) && hs[j] == hs[i] {
			j++
		}
		v := float32(1 + math.Log(float64(j-i)))
		norm += float64(v * v)
		out = append(out, feature{idx: hs[i], val: v})
		i = j
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := range out {
			out[i].val *= inv
		}
	}
	return out
}

func lengthBucket(n int) string {
	switch {
	case n <= 1:
		return "1"
	case n <= 3:
		return "3"
	case n <= 6:
		return "6"
	case n <= 12:
		return "12"
	case n <= 25:
		return "25"
	}
	return "long"
}

// hash is FNV-1a over the parts, separated, folded into the buckets.
func hash(parts ...string) uint32 {
	h := uint32(2166136261)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint32(p[i])
			h *= 16777619
		}
		h ^= 0x1f
		h *= 16777619
	}
	return h & (modelDims - 1)
}
