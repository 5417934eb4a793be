package providertest

import (
	"testing"
	"time"
)

// TestSchedule: a spread batch's requests run within its run (a tenth in from each end to
// start, ending by its end), start in the order they were submitted unless all lanes are
// busy, never more than BatchConcurrency at once, and the same seed gives the same times.
func TestSchedule(t *testing.T) {
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		n, lanes    int
		delay, each time.Duration
	}{
		{"few requests, long batch", 8, 4, 2 * time.Hour, 20 * time.Second},
		{"many requests, short batch: lanes full", 60, 3, 10 * time.Minute, time.Minute},
		{"no time at all", 5, 4, 0, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{Seed: 9, BatchConcurrency: tc.lanes, BatchRequestTime: tc.each})
			b := &batch{created: start, seq: 2, items: make([]batchItem, tc.n)}
			end := start.Add(tc.delay)
			runs := s.schedule(b, end)
			again := s.schedule(b, end)
			for i, r := range runs {
				if r != again[i] {
					t.Fatalf("request %d: %+v, then %+v with the same seed", i, r, again[i])
				}
				done := r.at.Add(r.lag)
				if r.at.Before(start.Add(tc.delay/10)) || done.After(end) || r.lag < 0 {
					t.Errorf("request %d runs %v to %v, outside the batch's run %v to %v", i, r.at, done, start.Add(tc.delay/10), end)
				}
				running := 0
				for _, o := range runs {
					if !o.at.After(r.at) && o.at.Add(o.lag).After(r.at) {
						running++
					}
				}
				if running > tc.lanes {
					t.Errorf("request %d starts with %d running, over %d lanes", i, running, tc.lanes)
				}
				if i > 0 && r.at.Before(runs[i-1].at) && tc.delay > 0 {
					t.Errorf("request %d starts at %v, before request %d (%v), submitted earlier", i, r.at, i-1, runs[i-1].at)
				}
			}
		})
	}
}
