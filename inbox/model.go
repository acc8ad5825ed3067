package inbox

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// DefaultThreshold is the confidence below which a reply's intent is
// unclear and its thread needs a member's review.
const DefaultThreshold = 0.6

// Model is a multinomial logistic regression over hashed features (see
// features): one weight per bucket and intent, and a bias per intent.
type Model struct {
	// w holds the weights bucket-major: w[idx*len(Intents)+k].
	w    []float32
	bias [numIntents]float32
}

const numIntents = 7

// intentIndex is the position of each intent in Intents.
func intentIndex(i Intent) int {
	for k, v := range Intents {
		if v == i {
			return k
		}
	}
	return -1
}

func newModel() *Model { return &Model{w: make([]float32, modelDims*numIntents)} }

// Probs returns the probability of each intent (in the order of Intents)
// for a reply's subject and body. The body is read without the message
// it quotes.
func (m *Model) Probs(subject, body string) [numIntents]float64 {
	return m.probs(features(subject, readable(body)))
}

func (m *Model) probs(fs []feature) [numIntents]float64 {
	var s [numIntents]float64
	for k := range s {
		s[k] = float64(m.bias[k])
	}
	for _, f := range fs {
		row := m.w[int(f.idx)*numIntents : int(f.idx)*numIntents+numIntents]
		for k := range s {
			s[k] += float64(f.val * row[k])
		}
	}
	return softmax(s)
}

func softmax(s [numIntents]float64) [numIntents]float64 {
	mx := s[0]
	for _, v := range s[1:] {
		mx = max(mx, v)
	}
	var sum float64
	for k := range s {
		s[k] = math.Exp(s[k] - mx)
		sum += s[k]
	}
	for k := range s {
		s[k] /= sum
	}
	return s
}

// The file format of a model: a magic, the bucket count, the intent
// count, the quantisation step, the biases, then every weight as a
// little-endian int16 times the step; all of it gzipped (most buckets of
// a model trained on a few thousand replies are zero).
const modelMagic = "LLCM1\n"

// MarshalBinary encodes the model compactly.
func (m *Model) MarshalBinary() ([]byte, error) {
	var peak float32
	for _, v := range m.w {
		peak = max(peak, float32(math.Abs(float64(v))))
	}
	step := peak / 32767
	if step == 0 {
		step = 1
	}
	var raw bytes.Buffer
	raw.WriteString(modelMagic)
	le := binary.LittleEndian
	raw.Write(le.AppendUint32(nil, modelDims))
	raw.Write(le.AppendUint32(nil, numIntents))
	raw.Write(le.AppendUint32(nil, math.Float32bits(step)))
	for _, b := range m.bias {
		raw.Write(le.AppendUint32(nil, math.Float32bits(b)))
	}
	buf := make([]byte, 2*len(m.w))
	for i, v := range m.w {
		le.PutUint16(buf[2*i:], uint16(int16(math.Round(float64(v/step)))))
	}
	raw.Write(buf)
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// ErrBadModel is a model file leadline cannot read.
var ErrBadModel = errors.New("inbox: not a classifier model")

// UnmarshalModel decodes what MarshalBinary wrote.
func UnmarshalModel(data []byte) (*Model, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadModel, err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadModel, err)
	}
	head := len(modelMagic) + 12 + 4*numIntents
	le := binary.LittleEndian
	if len(raw) < head || string(raw[:len(modelMagic)]) != modelMagic {
		return nil, ErrBadModel
	}
	p := raw[len(modelMagic):]
	if le.Uint32(p) != modelDims || le.Uint32(p[4:]) != numIntents || len(raw) != head+2*modelDims*numIntents {
		return nil, fmt.Errorf("%w: another shape", ErrBadModel)
	}
	step := math.Float32frombits(le.Uint32(p[8:]))
	m := newModel()
	for k := range m.bias {
		m.bias[k] = math.Float32frombits(le.Uint32(p[12+4*k:]))
	}
	ws := raw[head:]
	for i := range m.w {
		m.w[i] = float32(int16(le.Uint16(ws[2*i:]))) * step
	}
	return m, nil
}

//go:embed modeldata/builtin.llcm
var builtinModel []byte

var (
	builtinOnce sync.Once
	builtin     *Model
)

// Builtin returns the model shipped in the binary, trained on the corpus
// in testdata/model (see docs/INBOX.md).
func Builtin() *Model {
	builtinOnce.Do(func() {
		m, err := UnmarshalModel(builtinModel)
		if err != nil {
			panic("inbox: the built-in model does not load: " + err.Error())
		}
		builtin = m
	})
	return builtin
}

// DefaultClassifier returns the classifier NewService installs: the
// built-in model with the default threshold, behind the machine evidence
// of auto-replies.
func DefaultClassifier() Classifier {
	return &ModelClassifier{Model: Builtin(), Threshold: DefaultThreshold}
}

// ModelClassifier reads replies with a Model. Machine evidence (the
// auto-reply headers and subject prefixes) stays decisive: such a message
// is an auto-reply, read as ooo, or as wrong_person when the model finds
// the person left; so is a message that is an away notice as a whole
// (the rules find nothing else in it, and the model reads no answer to the
// outreach in it with confidence). Otherwise the model decides, and a
// person is never an auto-reply. Below Threshold the intent is unclear and
// the classification asks for review.
type ModelClassifier struct {
	Model     *Model
	Threshold float64
}

// Classify reads m.
func (c *ModelClassifier) Classify(_ context.Context, m Incoming) (Classification, error) {
	body := readable(m.Body)
	p := c.Model.probs(features(m.Subject, body))
	out := Classification{Scores: map[Intent]float64{}}
	best := 0
	for k, v := range p {
		out.Scores[Intents[k]] = v
		if v > p[best] {
			best = k
		}
	}
	out.Intent, out.Confidence = Intents[best], p[best]
	// A body the rules read as an away notice is not one when the model
	// reads an answer to the outreach in it with confidence (a yes, a no,
	// a later, a question): that is a person who mentions being away.
	answers := out.Confidence >= c.Threshold &&
		(out.Intent == Interested || out.Intent == Question || out.Intent == NotNow || out.Intent == NotInterested)
	if machine(m.Headers, fold(m.Subject)) || (awayNotice(body) && !answers) {
		// Machine evidence, or a whole message that is an away notice
		// (no question, no answer to the outreach).
		out.AutoReply, out.Intent, out.Confidence = true, OutOfOffice, 1
		if p[intentIndex(WrongPerson)] > p[intentIndex(OutOfOffice)] || left.in(fold(body)) {
			out.Intent = WrongPerson // "I no longer work here" auto-replies
		}
	} else if out.Confidence < c.Threshold {
		out.Intent, out.Review = Unclear, true
	}
	// A person whose reply the model reads as away is still a person: the
	// reply stops the enrollment (reply-stop on the safe side); only the
	// return date is kept.
	if out.Intent == WrongPerson {
		out.Replacement = replacement(body)
	}
	if out.AutoReply || away(fold(body)) {
		if t, ok := returnDate(body, senderTime(m.ReceivedAt, m.Headers), out.AutoReply); ok {
			out.ReturnsAt = &t
		}
	}
	return out, nil
}
