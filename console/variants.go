package console

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"time"

	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/sequences"
)

// variantSection is one step's A/B test on the sequence's page: its
// variants' numbers as a table and a chart, the pick and its reason, and
// the variants a manager may pick.
type variantSection struct {
	StepID string
	Table  reportTable
	Chart  chart
	// Winner says which variant the step sends to everyone and why, or
	// that a pick was undone; "" without a pick.
	Winner   string
	Picked   bool
	Variants []string
}

// variantHead is the variants table's header, the CSV's after its step
// column.
var variantHead = []string{"Variant", "Weight", "Sent", "Accepted", "Replied", "Positive replies", "Meetings",
	"Acceptance rate", "Reply rate", "Positive reply rate", "Meeting rate", "Share", "Chance of being best", "Won"}

// variantRow is one variant's cells, the API's raw numbers beside what
// people read.
func variantRow(v sequences.VariantStats) []cell {
	n := func(i int) cell { s := strconv.Itoa(i); return cell{s, s} }
	r := func(x *float64) cell { return cell{shown(x, "ratio"), raw(x)} }
	id := v.VariantID
	if v.Retired {
		id += " (retired)"
	}
	won := cell{"", "false"}
	if v.Won {
		won = cell{"won", "true"}
	}
	return []cell{{id, v.VariantID}, n(v.Weight), n(v.Sent), n(v.Accepted), n(v.Replied), n(v.Positive), n(v.Meetings),
		r(v.AcceptanceRate), r(v.ReplyRate), r(v.PositiveReplyRate), r(v.MeetingRate), r(v.Share), r(v.ProbabilityBest), won}
}

// variantSections are the A/B tests of the sequence's steps, in step order.
func (rq *Request) variantSections(q *sequences.SequenceView, st *enrollments.SequenceStats) []variantSection {
	if st == nil {
		return nil
	}
	var out []variantSection
	for _, s := range st.Steps {
		if len(s.Variants) == 0 {
			continue
		}
		sec := variantSection{StepID: s.StepID, Table: reportTable{Name: "variants-" + s.StepID, Caption: "Variants of step " + s.StepID,
			Head: variantHead, CSV: rq.Path("/sequences/") + q.ID + "/variants.csv"}}
		var labels []string
		// The chart draws percentages, rounded as the table shows them:
		// its axis then runs to the highest rate, not to 1.
		sets := []dataset{{Label: "Reply rate (%)"}, {Label: "Positive reply rate (%)"}, {Label: "Meeting rate (%)"}}
		if s.Type == sequences.TypeInvite {
			sets = append([]dataset{{Label: "Acceptance rate (%)"}}, sets...)
		}
		for _, v := range s.Variants {
			sec.Table.Rows = append(sec.Table.Rows, variantRow(v))
			if v.Retired {
				continue
			}
			sec.Variants = append(sec.Variants, v.VariantID)
			labels = append(labels, v.VariantID)
			rates := []*float64{v.ReplyRate, v.PositiveReplyRate, v.MeetingRate}
			if s.Type == sequences.TypeInvite {
				rates = append([]*float64{v.AcceptanceRate}, rates...)
			}
			for i := range sets {
				sets[i].Data = append(sets[i].Data, chartPercent(rates[i]))
			}
		}
		sec.Chart = newChart("bar", "Rates by variant of step "+s.StepID, labels, sets)
		if w := q.WinnerOf(s.StepID); w != nil {
			sec.Winner, sec.Picked = winnerText(w), w.Active()
		}
		out = append(out, sec)
	}
	return out
}

// chartPercent is a rate as the percentage the tables show (shown's
// "ratio": one decimal); nil stays nil (no rate yet).
func chartPercent(rate *float64) *float64 {
	if rate == nil {
		return nil
	}
	p, _ := strconv.ParseFloat(strconv.FormatFloat(*rate*100, 'f', 1, 64), 64)
	return &p
}

// winnerText says when and why a step's variant won, or that the pick was
// undone.
func winnerText(w *sequences.Winner) string {
	at := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
	if !w.Active() {
		return fmt.Sprintf("The pick of %s was undone on %s: the step splits its traffic by weight again.", w.VariantID, at(*w.UndoneAt))
	}
	if w.By == "manual" {
		return fmt.Sprintf("%s was picked by a manager on %s: every enrollment reaching the step gets it.", w.VariantID, at(w.At))
	}
	sends := ""
	for i, c := range w.Counts {
		if i > 0 {
			sends += ", "
		}
		sends += fmt.Sprintf("%s %d", c.VariantID, c.Sent)
	}
	return fmt.Sprintf("%s won by evidence on %s: a %.1f%% chance of the best %s after %s sends. Every enrollment reaching the step gets it.",
		w.VariantID, at(w.At), w.Probability*100, w.Metric, sends)
}

// pickVariant makes a manager's pick of a step's variant the winner, as
// POST /v1/sequences/{id}/steps/{step_id}/winner does.
func (c *Console) pickVariant(rq *Request) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	step := rq.R.PathValue("step")
	if _, err := c.pl.Sequences.Pick(rq.Ctx, rq.P, q.ID, step, sequences.PickInput{VariantID: rq.R.PostFormValue("variant_id")}); err != nil {
		return err
	}
	rq.Flash(fmt.Sprintf("Variant %s of step %s picked: every enrollment reaching the step gets it.", rq.R.PostFormValue("variant_id"), step))
	rq.Redirect("/sequences/" + q.ID)
	return nil
}

// undoVariant undoes a step's pick, as DELETE on the same API route does.
func (c *Console) undoVariant(rq *Request) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	step := rq.R.PathValue("step")
	if _, err := c.pl.Sequences.Undo(rq.Ctx, rq.P, q.ID, step); err != nil {
		return err
	}
	rq.Flash(fmt.Sprintf("The pick of step %s was undone: it splits its traffic by weight again.", step))
	rq.Redirect("/sequences/" + q.ID)
	return nil
}

// variantsExport answers every step's variants as CSV, with the API's raw
// numbers (ratios 0 to 1, empty for null).
func (c *Console) variantsExport(rq *Request) error {
	q, err := c.visibleSequence(rq)
	if err != nil {
		return err
	}
	st, err := c.pl.Enrollments.Stats(rq.Ctx, rq.P, q.ID)
	if err != nil {
		return err
	}
	w := rq.W
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="leadline-variants-%s.csv"`, q.ID))
	cw := csv.NewWriter(w)
	_ = cw.Write(append([]string{"Step"}, variantHead...))
	for _, s := range st.Steps {
		for _, v := range s.Variants {
			rec := []string{csvSafe(s.StepID)}
			for _, x := range variantRow(v) {
				rec = append(rec, csvSafe(x.Raw))
			}
			_ = cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}
