package inbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Endpoint reads replies with a model behind an OpenAI-compatible chat
// completions endpoint (a team's local model, for example). The machine
// evidence of auto-replies stays decisive, and on a timeout, an error or
// an answer that names no intent it falls back to Fallback (the built-in
// model).
type Endpoint struct {
	// URL of the chat completions endpoint, e.g.
	// http://127.0.0.1:8000/v1/chat/completions.
	URL string
	// Key is sent as a bearer token when set.
	Key string
	// Model is the model name the endpoint expects.
	Model string
	// Timeout of one call (0: 5 seconds).
	Timeout  time.Duration
	Client   *http.Client
	Fallback Classifier
}

const endpointPrompt = `You classify replies to cold sales outreach (email or LinkedIn, any language). ` +
	`Answer with JSON only: {"intent": one of "interested", "question", "not_now", "not_interested", "ooo", "wrong_person", "unclear", "confidence": a number from 0 to 1}. ` +
	`interested: wants a call or demo; question: asks something before deciding; not_now: maybe later; not_interested: no, or stop writing; ` +
	`ooo: the whole message is an away notice; wrong_person: someone else decides, or the person left; unclear: anything else.`

// Classify reads m with the endpoint, or with Fallback when it fails.
func (e *Endpoint) Classify(ctx context.Context, m Incoming) (Classification, error) {
	if machine(m.Headers, fold(m.Subject)) || awayNotice(readable(m.Body)) {
		return e.Fallback.Classify(ctx, m)
	}
	c, err := e.call(ctx, m)
	if err != nil {
		return e.Fallback.Classify(ctx, m)
	}
	return c, nil
}

func (e *Endpoint) call(ctx context.Context, m Incoming) (Classification, error) {
	timeout := e.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	user := readable(m.Body)
	if m.Subject != "" {
		user = "Subject: " + m.Subject + "\n\n" + user
	}
	body, _ := json.Marshal(map[string]any{"model": e.Model, "temperature": 0, "messages": []map[string]string{
		{"role": "system", "content": endpointPrompt}, {"role": "user", "content": user}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return Classification{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.Key != "" {
		req.Header.Set("Authorization", "Bearer "+e.Key)
	}
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return Classification{}, err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return Classification{}, fmt.Errorf("inbox: classifier endpoint: %s", res.Status)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out); err != nil {
		return Classification{}, err
	}
	if len(out.Choices) == 0 {
		return Classification{}, fmt.Errorf("inbox: classifier endpoint: no choices")
	}
	return parseEndpointAnswer(out.Choices[0].Message.Content, m)
}

// parseEndpointAnswer reads {"intent": …, "confidence": …}, also inside
// a code fence or around other text; a bare intent has confidence 1.
func parseEndpointAnswer(content string, m Incoming) (Classification, error) {
	content = strings.TrimSpace(content)
	var ans struct {
		Intent     Intent   `json:"intent"`
		Confidence *float64 `json:"confidence"`
	}
	if i, j := strings.IndexByte(content, '{'), strings.LastIndexByte(content, '}'); i >= 0 && j > i {
		if err := json.Unmarshal([]byte(content[i:j+1]), &ans); err != nil {
			return Classification{}, err
		}
	} else {
		ans.Intent = Intent(strings.ToLower(strings.Trim(content, " .\"'`")))
	}
	if !ans.Intent.Valid() {
		return Classification{}, fmt.Errorf("inbox: classifier endpoint: intent %q", ans.Intent)
	}
	c := Classification{Intent: ans.Intent, Confidence: 1}
	if ans.Confidence != nil && *ans.Confidence > 0 && *ans.Confidence <= 1 {
		c.Confidence = *ans.Confidence
	}
	if c.Confidence < DefaultThreshold {
		c.Intent, c.Review = Unclear, true
	}
	// The endpoint reads a person's words: auto-replies went to the
	// built-in model before it (machine evidence), so an "ooo" here is a
	// person who is away, and the reply stops the enrollment.
	body := readable(m.Body)
	if c.Intent == WrongPerson {
		c.Replacement = replacement(body)
	}
	if away(fold(body)) || c.Intent == OutOfOffice {
		if t, ok := returnDate(body, senderTime(m.ReceivedAt, m.Headers), false); ok {
			c.ReturnsAt = &t
		}
	}
	return c, nil
}
