package main

import (
	"strings"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45 s", 3*time.Minute + 10*time.Second: "3 min", 2*time.Hour + 14*time.Minute: "2 h 14 min",
		5 * time.Hour: "5 h", 3*24*time.Hour + 4*time.Hour: "3 d 4 h", 48 * time.Hour: "2 d",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestTimeTag: a moment is a <time> element with its exact time, readable without a
// script; anything else is shown as written, escaped.
func TestTimeTag(t *testing.T) {
	got := string(timeTag("2026-11-27T12:35:59.108999683Z"))
	want := `<time datetime="2026-11-27T12:35:59Z" title="Fri 27 Nov 2026, 12:35:59 UTC">27 Nov 2026, 12:35 UTC</time>`
	if got != want {
		t.Errorf("timeTag = %s\nwant %s", got, want)
	}
	if got := string(timeTag("soon <b>")); got != "soon &lt;b&gt;" {
		t.Errorf("not a time: %q", got)
	}
	if got := string(timeTag(time.Time{})); got != "" {
		t.Errorf("the zero time: %q", got)
	}
	if got := string(timeTag(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600)))); !strings.Contains(got, `datetime="2026-01-02T02:04:05Z"`) {
		t.Errorf("a time in another zone: %q", got)
	}
}
