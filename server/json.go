package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// jsonFormat is the one body format leadline speaks. Bodies are taken
// exactly as sent or refused: invalid UTF-8 (raw or as an escaped lone
// surrogate) and a name repeated within one object are errors, field names
// match case-sensitively (huma.ValidateStrictCasing), and numbers inside
// free-form objects keep every digit (json.Number instead of float64).
var jsonFormat = huma.Format{
	Marshal:   marshalAnswer,
	Unmarshal: strictUnmarshal,
}

// stdNumber writes encoding/json's Number, which free-form values decode
// into (strictUnmarshal), as the number it holds, as encoding/json does.
var stdNumber = jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, n json.Number) error {
	if n == "" {
		n = "0"
	}
	return enc.WriteValue(jsontext.Value(n))
})

// marshalAnswer writes v as encoding/json would, with one difference: a
// nil slice is written as [] rather than null. A list in an answer is
// always an array, so the document can say so (finishSchemas) and
// generated clients need no null checks on lists. A nil map or pointer is
// still null, and the document says that too.
func marshalAnswer(w io.Writer, v any) error {
	b, err := jsonv2.Marshal(v, jsonv1.DefaultOptionsV1(), jsonv2.FormatNilSliceAsNull(false),
		jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false), jsonv2.WithMarshalers(stdNumber))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func init() {
	// A field named in another case is an unknown field, not an alias.
	huma.ValidateStrictCasing = true
}

// strictUnmarshal decodes one JSON value from data into v. huma calls it
// twice per body: once into an any to validate against the schema, then
// into the operation's input type. The second decode keeps numbers as
// json.Number, so free-form values round-trip exactly.
func strictUnmarshal(data []byte, v any) error {
	if err := checkJSON(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, generic := v.(*any); !generic {
		dec.UseNumber()
	}
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s must be %s, not %s", te.Field, kindOf(te.Type.Kind().String()), te.Value)
		}
		return err
	}
	return nil
}

// checkJSON checks that data is one JSON value in the I-JSON profile (RFC
// 7493): valid UTF-8 throughout, escapes that name real characters, unique
// names within each object, and nothing after the value.
func checkJSON(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	err := dec.SkipValue()
	if err == nil {
		if _, err = dec.ReadToken(); err == io.EOF {
			return nil
		}
		if err == nil {
			return errors.New("the body holds more than one JSON value")
		}
	}
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return errors.New("the body is not valid JSON")
	}
	where := ""
	if p := string(se.JSONPointer); p != "" {
		where = " at " + p
	}
	switch msg := se.Err.Error(); {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		return fmt.Errorf("the body names %s twice in one object; each field may appear once", lastToken(se.JSONPointer))
	case strings.Contains(msg, "UTF-8") || strings.Contains(msg, "surrogate"):
		return fmt.Errorf("the body holds text that is not valid UTF-8%s", where)
	case strings.Contains(msg, "depth"):
		return errors.New("the body nests objects and arrays too deeply")
	default:
		return fmt.Errorf("the body is not valid JSON%s (%s)", where, msg)
	}
}

// lastToken names the last name of a JSON pointer, quoted.
func lastToken(p jsontext.Pointer) string { return fmt.Sprintf("%q", p.LastToken()) }

func kindOf(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	default:
		return "a number"
	}
}
