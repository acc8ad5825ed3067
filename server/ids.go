package server

import (
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
	for _, sc := range s.api.OpenAPI().Components.Schemas.Map() {
		roots = append(roots, sc)
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
			sc.PatternDescription = "an id: a lower-case uuid"
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
