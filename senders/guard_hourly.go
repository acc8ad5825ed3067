package senders

import (
	"context"
	"time"
)

// hourlyGuard caps a mailbox's emails in each local hour, inside its daily
// cap: receivers' filters read a mailbox that sends its day's mail in one
// burst as a spammer. The hour's count is a budget counter of its own
// (sender_usage, under the local hour and hourKey).
type hourlyGuard struct {
	noStop
}

// hourKey is the usage key of the emails of a local hour.
const hourKey = "email_hour"

func (hourlyGuard) Code() string { return GuardHourlyCap }

func (hourlyGuard) Check(ctx context.Context, svc *Service, s *Sender, a Action, now, _ time.Time) (*Blocked, func(context.Context) error, error) {
	limit := s.HourlyCapOf()
	if a != SendEmail || limit <= 0 {
		return nil, nil, nil
	}
	hour := localHour(now, s.Location())
	ok, err := svc.store.Take(ctx, s.ID, hour, hourKey, limit)
	if err != nil || !ok {
		return &Blocked{Code: GuardHourlyCap, Until: nextHour(now, s.Location())}, nil, err
	}
	return nil, func(ctx context.Context) error { return svc.store.GiveBack(ctx, s.ID, hour, hourKey) }, nil
}

// DayCap is the hourly cap over the day's working hours, counting an hour
// a window only touches as a whole one.
func (hourlyGuard) DayCap(s *Sender, a Action, day string) (int, bool) {
	limit := s.HourlyCapOf()
	if a != SendEmail || limit <= 0 {
		return 0, false
	}
	hours := int((s.workingTime(day) + time.Hour - 1) / time.Hour)
	return hours * limit, true
}

func (hourlyGuard) Text() (string, string) {
	return "%d enrollments wait: their mailbox sent this hour's emails (hourly_cap).",
		"Nothing to do: the count starts again at the next local hour; raise hourly_cap in the setup file, or add mailboxes, to send more."
}

// localHour is t's local hour in loc as YYYY-MM-DDTHH: the usage day of an
// hour's count.
func localHour(t time.Time, loc *time.Location) string { return t.In(loc).Format("2006-01-02T15") }

// nextHour returns the first instant of the local hour after t's.
func nextHour(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	return time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), 0, 0, 0, loc).Add(time.Hour).UTC()
}
