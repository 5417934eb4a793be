package research

import (
	"testing"
	"time"
)

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a  b\n c", 10, "a b c"},                           // one line
		{"abcdefghij", 5, "abcd…"},                          // no space: cut mid-word
		{"tau spreads along synapses", 16, "tau spreads…"},  // at the last word that fits
		{"tau spreads, along synapses", 17, "tau spreads…"}, // no dangling comma
		{"a verylongwordindeed", 12, "a verylongw…"},        // a space too early: mid-word
		{"ünïcödé text", 5, "ünïc…"},                        // runes, not bytes
		{"short", 5, "short"},
		{"anything", 0, ""},
	}
	for _, tt := range tests {
		if got := Shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestVerdictOf(t *testing.T) {
	for score, want := range map[float64]string{10: "accept", AcceptAt: "accept", 6.4: "revise", ReviseAt: "revise", 3.9: "reject", 0: "reject"} {
		if got := VerdictOf(score); got != want {
			t.Errorf("VerdictOf(%v) = %q, want %q", score, got, want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDollars(t *testing.T) {
	for v, want := range map[float64]string{0: "0.00", -1: "0.00", 12.3456: "12.35", 1: "1.00", 0.5: "0.50", 0.123: "0.12", 0.0125: "0.013", 0.0042: "0.0042", 0.001: "0.0010", 0.00001234: "0.000012"} {
		if got := Dollars(v); got != want {
			t.Errorf("Dollars(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestShortDuration: a duration loses its zero seconds and minutes, and nothing else.
func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 30 * time.Second: "30s", 5 * time.Minute: "5m", 2 * time.Hour: "2h", 24 * time.Hour: "24h",
		3*time.Hour + 13*time.Minute: "3h13m", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s",
		time.Hour + time.Second: "1h0m1s", 168*time.Hour + 30*time.Minute: "168h30m", 2*time.Minute + 500*time.Millisecond: "2m0.5s",
	} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
