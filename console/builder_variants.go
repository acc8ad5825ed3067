package console

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/sequences"
)

// variantFields are the step fields a variant holds instead of the step:
// its texts.
var variantFields = []string{"note", "subject", "body"}

// variantForm is one variant of a step in the builder: its id, weight and
// the step type's texts.
type variantForm struct {
	Index      int
	ID, Weight string
	Fields     []stepField
}

// pickForm is a step's pick_winner in the builder; an empty metric is no
// pick by evidence.
type pickForm struct {
	Metric, MinSends, Confidence string
}

// textFields are the texts of a step of type typ that a variant holds.
func textFields(typ string) []string {
	spec, _ := sequences.SpecOf(typ)
	var out []string
	for _, f := range variantFields {
		if slices.Contains(spec.Fields, f) {
			out = append(out, f)
		}
	}
	return out
}

// takesVariants reports whether a step of type typ may test variants.
func takesVariants(typ string) bool {
	spec, _ := sequences.SpecOf(typ)
	return slices.Contains(spec.Fields, "variants")
}

// newVariantForm is the form of one variant of a step of type typ.
func newVariantForm(typ, id, weight string, values map[string]string) variantForm {
	vf := variantForm{ID: id, Weight: weight}
	for _, f := range textFields(typ) {
		vf.Fields = append(vf.Fields, stepField{Name: f, Label: f, Kind: fieldKinds[f], Value: values[f]})
	}
	return vf
}

// variantsOf are the builder's forms of a stored step's variants and pick.
func variantsOf(s sequences.Step) ([]variantForm, pickForm) {
	var vs []variantForm
	for _, v := range s.Variants {
		w := ""
		if v.Weight != 0 {
			w = strconv.Itoa(v.Weight)
		}
		vs = append(vs, newVariantForm(s.Type, v.ID, w, map[string]string{"note": v.Note, "subject": v.Subject, "body": v.Body}))
	}
	var pk pickForm
	if p := s.PickWinner; p != nil {
		pk = pickForm{Metric: p.Metric, MinSends: strconv.Itoa(p.MinSends), Confidence: strconv.FormatFloat(p.Confidence, 'f', -1, 64)}
	}
	return vs, pk
}

// readVariants reads the variants and pick of the step posted under
// prefix p.
func readVariants(f url.Values, p, typ string) ([]variantForm, pickForm) {
	n, _ := strconv.Atoi(f.Get(p + "variants"))
	var vs []variantForm
	for j := range min(max(n, 0), 20) {
		vp := p + "v" + strconv.Itoa(j) + "."
		values := map[string]string{}
		for _, name := range textFields(typ) {
			values[name] = f.Get(vp + name)
		}
		vs = append(vs, newVariantForm(typ, f.Get(vp+"id"), f.Get(vp+"weight"), values))
	}
	return vs, pickForm{Metric: f.Get(p + "pick_metric"), MinSends: f.Get(p + "pick_min_sends"), Confidence: f.Get(p + "pick_confidence")}
}

// variants puts the form's variants and pick into s, or returns an error
// naming what is not a number.
func (sf stepForm) variants(s *sequences.Step) error {
	for _, vf := range sf.Variants {
		v := sequences.Variant{ID: strings.TrimSpace(vf.ID)}
		for _, fd := range vf.Fields {
			switch fd.Name {
			case "note":
				v.Note = fd.Value
			case "subject":
				v.Subject = fd.Value
			case "body":
				v.Body = fd.Value
			}
		}
		if w := strings.TrimSpace(vf.Weight); w != "" {
			n, err := strconv.Atoi(w)
			if err != nil {
				return apikit.Invalid(fmt.Sprintf("Step %q, variant %q: the weight %q is not a whole number.", s.ID, v.ID, w), "Type a whole number from 1 to 100, or leave it empty for 1.")
			}
			v.Weight = n
		}
		s.Variants = append(s.Variants, v)
	}
	pk := sf.Pick
	if strings.TrimSpace(pk.Metric) == "" {
		return nil
	}
	minSends, err1 := strconv.Atoi(strings.TrimSpace(pk.MinSends))
	conf, err2 := strconv.ParseFloat(strings.TrimSpace(pk.Confidence), 64)
	if err1 != nil || err2 != nil {
		return apikit.Invalid(fmt.Sprintf("Step %q: picking a winner needs its minimum sends as a whole number and its confidence as a number.", s.ID),
			"Type the sends every variant needs (100) and the confidence (0.95), or choose no metric.")
	}
	s.PickWinner = &sequences.PickWinner{Metric: strings.TrimSpace(pk.Metric), MinSends: minSends, Confidence: conf}
	return nil
}

// editVariants applies a variant button of the builder: "variant:I" adds
// a variant to step I (the first time, two: the step's own texts become
// variant a, and b starts empty), "dropvariant:I.J" removes its variant J
// (the last one left becomes the step's own texts again). handled is
// false for another button.
func (bf *builderForm) editVariants(verb, arg string) (handled bool, err error) {
	if verb != "variant" && verb != "dropvariant" {
		return false, nil
	}
	si, vj, _ := strings.Cut(arg, ".")
	i, err := strconv.Atoi(si)
	if err != nil || i < 0 || i >= len(bf.Steps) || !takesVariants(bf.Steps[i].Type) {
		return true, apikit.Invalid("The step to change is not in the form.", "Reload the page and try again.")
	}
	sf := &bf.Steps[i]
	if verb == "variant" {
		if len(sf.Variants) == 0 {
			sf.Variants = append(sf.Variants, newVariantForm(sf.Type, "a", "", sf.valueOf))
			for _, f := range textFields(sf.Type) {
				sf.valueOf[f] = ""
			}
		}
		sf.Variants = append(sf.Variants, newVariantForm(sf.Type, freeVariantID(sf.Variants), "", map[string]string{}))
		*sf = sf.refresh()
		return true, nil
	}
	j, err := strconv.Atoi(vj)
	if err != nil || j < 0 || j >= len(sf.Variants) {
		return true, apikit.Invalid("The variant to remove is not in the form.", "Reload the page and try again.")
	}
	sf.Variants = slices.Delete(sf.Variants, j, j+1)
	if len(sf.Variants) == 1 {
		for _, fd := range sf.Variants[0].Fields {
			sf.valueOf[fd.Name] = fd.Value
		}
		sf.Variants, sf.Pick = nil, pickForm{}
	}
	*sf = sf.refresh()
	return true, nil
}

// freeVariantID is the first letter no variant of vs has as its id.
func freeVariantID(vs []variantForm) string {
	for c := 'a'; ; c++ {
		id := string(c)
		if c > 'z' {
			id = "v" + strconv.Itoa(int(c-'a'))
		}
		if !slices.ContainsFunc(vs, func(v variantForm) bool { return v.ID == id }) {
			return id
		}
	}
}

// refresh is sf shown again from its values, keeping its variants and
// pick.
func (sf stepForm) refresh() stepForm {
	return newStepForm(sf.ID, sf.Type, sf.Next, sf.valueOf).with(sf.Variants, sf.Pick)
}

// with is sf with variants vs and pick pk: with variants, the step's own
// text fields are not shown (the variants hold the texts).
func (sf stepForm) with(vs []variantForm, pk pickForm) stepForm {
	sf.Variants, sf.Pick = vs, pk
	if len(vs) > 0 {
		sf.Fields = slices.DeleteFunc(slices.Clone(sf.Fields), func(f stepField) bool { return slices.Contains(variantFields, f.Name) })
	}
	return sf
}
