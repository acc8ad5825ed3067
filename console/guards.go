package console

// resumeSender lifts the stop of a sender's guard (low_acceptance_rate,
// high_bounce_rate; docs/GUARDS.md) and wakes the enrollments it held:
// the Resume button beside the stop's health reason, for managers.
func (c *Console) resumeSender(rq *Request) error {
	s, err := c.visibleSender(rq)
	if err != nil {
		return err
	}
	if _, err := c.pl.ResumeSender(rq.Ctx, rq.P, s.ID, rq.R.PostFormValue("guard")); err != nil {
		return err
	}
	rq.Redirect("/senders/" + s.ID)
	return nil
}
