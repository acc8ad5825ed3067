package server

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
)

// canonicalIDs makes every uuid-formatted parameter and body field take
// ids only in apikit.IDPattern's form. huma's own uuid check also reads
// braces, urn:uuid: prefixes, bare hex and upper case; a pattern on each
// such schema refuses them with 422 before any handler runs, on every
// operation registered so far, and documents the form in the OpenAPI.
func (s *Server) canonicalIDs() {
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
		if sc.Format == "uuid" && sc.Pattern == "" {
			sc.Pattern = apikit.IDPattern
			sc.PatternDescription = "an id: a lower-case uuid"
			sc.PrecomputeMessages()
		}
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
	for _, sc := range s.api.OpenAPI().Components.Schemas.Map() {
		walk(sc)
	}
	for _, item := range s.api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			for _, p := range op.Parameters {
				walk(p.Schema)
			}
		}
	}
}
