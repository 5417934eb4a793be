package tournament

import (
	"math"
	"testing"
)

func TestExpected(t *testing.T) {
	tests := []struct {
		a, b, want float64
	}{
		{1200, 1200, 0.5},
		{1600, 1200, 1 / (1 + math.Pow(10, -1))}, // 400 points: 10 to 1 odds
		{1200, 1600, 1 / (1 + 10.0)},
		{1500, 1300, 0.7597},
	}
	for _, tt := range tests {
		if got := Expected(tt.a, tt.b); math.Abs(got-tt.want) > 1e-4 {
			t.Errorf("Expected(%v, %v) = %.4f, want %.4f", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestUpdate(t *testing.T) {
	tests := []struct {
		name         string
		a, b         float64
		aWon         bool
		ka, kb       float64
		wantA, wantB float64
	}{
		{"equal players, A wins", 1200, 1200, true, 32, 32, 1216, 1184},
		{"equal players, B wins", 1200, 1200, false, 32, 32, 1184, 1216},
		{"favourite wins: small gain", 1400, 1200, true, 32, 32, 1407.69, 1192.31},
		{"upset: big swing", 1400, 1200, false, 32, 32, 1375.69, 1224.31},
		{"different K: newcomer moves more", 1200, 1200, true, 32, 16, 1216, 1192},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotA, gotB := Update(tt.a, tt.b, tt.aWon, tt.ka, tt.kb)
			if gotA != tt.wantA || gotB != tt.wantB {
				t.Errorf("Update = (%v, %v), want (%v, %v)", gotA, gotB, tt.wantA, tt.wantB)
			}
		})
	}
}

func TestUpdateConservesPointsWithEqualK(t *testing.T) {
	for _, aWon := range []bool{true, false} {
		a, b := Update(1333, 1187, aWon, 24, 24)
		if math.Abs((a+b)-(1333+1187)) > 0.011 {
			t.Errorf("aWon=%v: total %v, want %v", aWon, a+b, 1333+1187)
		}
	}
}

func TestK(t *testing.T) {
	tests := []struct {
		matches int
		want    float64
	}{{0, 32}, {4, 32}, {5, 24}, {14, 24}, {15, 16}, {100, 16}}
	for _, tt := range tests {
		if got := K(tt.matches); got != tt.want {
			t.Errorf("K(%d) = %v, want %v", tt.matches, got, tt.want)
		}
	}
}
