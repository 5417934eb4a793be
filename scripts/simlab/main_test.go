package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

// TestSimlab: the table written is the simulated lab's for the hypothesis's hidden quality
// as the store keeps it (the truth is simulator.Lab's, called here apart), the pilot's is
// of quality 0, and a hypothesis without a hidden quality, or missing flags, is refused
// with the reason and nothing written.
func TestSimlab(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	q := 1.6
	for _, h := range []research.Hypothesis{{ID: "h-0001", Title: "good", Latent: &q}, {ID: "h-0002", Title: "a scientist's"}} {
		if err := st.PutHypothesis(context.Background(), "s-1", h); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for _, tt := range []struct {
		name    string
		args    []string
		latent  float64
		refused string
	}{
		{"tested", []string{"--session", "s-1", "--hypothesis", "h-0001", "--seed", "7"}, 1.6, ""},
		{"pilot", []string{"--pilot", "--seed", "7"}, 0, ""},
		{"no hidden quality", []string{"--session", "s-1", "--hypothesis", "h-0002"}, 0, "h-0002 has no hidden quality"},
		{"no such hypothesis", []string{"--session", "s-1", "--hypothesis", "h-0009"}, 0, "h-0009"},
		{"no hypothesis named", []string{"--session", "s-1"}, 0, "--hypothesis are required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "lab.csv")
			var errOut bytes.Buffer
			args := append([]string{"--store", filepath.Join(dir, "sessions"), "--n", "12", "--out", out}, tt.args...)
			err := run(context.Background(), args, &errOut)
			got, readErr := os.ReadFile(out)
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) || readErr == nil {
					t.Fatalf("err %v (file written: %v), want a refusal naming %q and no file", err, readErr == nil, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := simulator.Lab(tt.latent, 7, simulator.LabDesign{N: 12}).CSV
			if !bytes.Equal(got, want) {
				t.Errorf("wrote\n%s\nwant simulator.Lab(%g, 7)'s\n%s", got, tt.latent, want)
			}
		})
	}
}
