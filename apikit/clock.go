package apikit

import (
	"sync"
	"time"
)

// Clock tells the time. Every time leadline stores comes from a Clock, so
// tests move time forward instead of waiting for it.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock, in UTC truncated to microseconds (the
// precision both databases keep).
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// FakeClock is a Clock for tests that only moves when told to.
type FakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewFakeClock returns a FakeClock standing at t.
func NewFakeClock(t time.Time) *FakeClock {
	return &FakeClock{t: t.UTC().Truncate(time.Microsecond)}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d).Truncate(time.Microsecond)
}

// Set moves the clock to t.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t.UTC().Truncate(time.Microsecond)
}
