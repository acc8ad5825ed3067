package server

import (
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
)

// registryEnums are the enums the domain's registries keep: a schema
// whose enum is one of these names takes the registry's values.
var registryEnums = map[string]func() []string{
	"@actions":    senders.ActionNames,
	"@step_types": sequences.StepTypes,
}

// finishSchemas completes the schemas of every operation registered so
// far, in the document and in validation alike:
//   - every uuid-formatted parameter and body field takes ids only in
//     apikit.IDPattern's form. huma's own uuid check also reads braces,
//     urn:uuid: prefixes, bare hex and upper case; a pattern on each such
//     schema refuses them with 422 before any handler runs, and documents
//     the form in the OpenAPI;
//   - a field whose enum names a registry (registryEnums: the capped
//     actions, the step types) gets the registry's values, so that the
//     enums are declared once, in senders.Specs and sequences.Steps.
func (s *Server) finishSchemas() {
	var roots []*huma.Schema
	reg := s.api.OpenAPI().Components.Schemas
	for name, sc := range reg.Map() {
		roots = append(roots, sc)
		if t := reg.TypeFromRef(schemaRef + name); t != nil {
			nullAsSent(sc, t)
		}
	}
	for _, item := range s.api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			for _, p := range op.Parameters {
				roots = append(roots, p.Schema)
			}
		}
	}
	s.eachSchema(roots, func(sc *huma.Schema) {
		if sc.Format == "uuid" && sc.Pattern == "" {
			sc.Pattern = apikit.IDPattern
			sc.PrecomputeMessages()
		}
		if len(sc.Enum) == 1 {
			if name, ok := sc.Enum[0].(string); ok && registryEnums[name] != nil {
				sc.Enum = nil
				for _, v := range registryEnums[name]() {
					sc.Enum = append(sc.Enum, v)
				}
				sc.PrecomputeMessages()
			}
		}
	})
}

// eachSchema calls fn once on every schema reachable from roots: through
// references, properties, items, additional properties and compositions.
func (s *Server) eachSchema(roots []*huma.Schema, fn func(*huma.Schema)) {
	seen := map[*huma.Schema]bool{}
	var walk func(sc *huma.Schema)
	walk = func(sc *huma.Schema) {
		if sc == nil || seen[sc] {
			return
		}
		seen[sc] = true
		if sc.Ref != "" {
			walk(s.api.OpenAPI().Components.Schemas.SchemaFromRef(sc.Ref))
		}
		fn(sc)
		for _, p := range sc.Properties {
			walk(p)
		}
		walk(sc.Items)
		if ap, ok := sc.AdditionalProperties.(*huma.Schema); ok {
			walk(ap)
		}
		for _, group := range [][]*huma.Schema{sc.OneOf, sc.AnyOf, sc.AllOf} {
			for _, sub := range group {
				walk(sub)
			}
		}
	}
	for _, sc := range roots {
		walk(sc)
	}
}

// bodyArraysNotNull makes every array in op's request body refuse null:
// huma takes arrays as nullable by default, so a required list such as a
// webhook's events would otherwise accept null and store a list of
// nothing. A client that means no items sends [] or, where the field is
// optional, leaves it out. (No request body schema is also a response's,
// so the responses' documented arrays stay as they were.)
func (s *Server) bodyArraysNotNull(op *huma.Operation) {
	if op == nil || op.RequestBody == nil {
		return
	}
	var roots []*huma.Schema
	for _, mt := range op.RequestBody.Content {
		roots = append(roots, mt.Schema)
	}
	s.eachSchema(roots, func(sc *huma.Schema) {
		if sc.Type == huma.TypeArray {
			sc.Nullable = false
		}
	})
}

const schemaRef = "#/components/schemas/"

// nullAsSent makes the properties of sc, the schema of the Go struct t,
// nullable exactly when the answer can hold null there, as the server
// writes it (marshalAnswer, encoding/json's rules but for nil slices):
//   - a slice is never null: an answer writes a nil one as [];
//   - a map is null when nil, unless omitempty leaves it out;
//   - a pointer is null when nil, unless omitempty leaves it out. huma
//     already says so of pointers to scalars, but not of pointers to
//     structs (a $ref, which cannot also be null: it becomes anyOf the
//     reference and null), and its enums leave null out.
//
// huma's defaults say the opposite of the first (every slice nullable)
// and nothing of the others, so a generated client either checks lists
// for a null that never comes or fails on a null that does.
func nullAsSent(sc *huma.Schema, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || sc == nil {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			nullAsSent(sc, f.Type) // huma inlines embedded structs' fields
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		prop := sc.Properties[name]
		if prop == nil || f.Tag.Get("nullable") != "" {
			continue
		}
		omitted := strings.Contains(","+opts+",", ",omitempty,")
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			prop.Nullable = false
		case ft.Kind() == reflect.Map && !omitted:
			prop.Nullable = true
		case ft.Kind() == reflect.Pointer && !omitted:
			nullable(sc, name, prop)
		}
	}
}

// nullable makes sc's property name, prop, accept null.
func nullable(sc *huma.Schema, name string, prop *huma.Schema) {
	if prop.Ref != "" {
		sc.Properties[name] = &huma.Schema{Description: prop.Description,
			AnyOf: []*huma.Schema{{Ref: prop.Ref}, {Type: "null"}}}
		return
	}
	if prop.Type == "" {
		return // any value, null included
	}
	prop.Nullable = true
	if len(prop.Enum) > 0 && prop.Enum[len(prop.Enum)-1] != nil {
		prop.Enum = append(prop.Enum, nil)
	}
	prop.PrecomputeMessages()
}
