package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/session"
	"gonum.org/v1/plot/plotter"
)

// The Elo chart: its SVG, its series and its ticks.

// svgText parses an SVG document and returns the text of its <text> elements.
func svgText(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	var root string
	in := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("elo.svg is not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			in = tok.Name.Local == "text"
		case xml.EndElement:
			in = false
		case xml.CharData:
			if in {
				texts = append(texts, strings.TrimSpace(string(tok)))
			}
		}
	}
	if root != "svg" {
		t.Fatalf("elo.svg's root element is <%s>, want <svg>", root)
	}
	return texts
}

func TestChart(t *testing.T) {
	twelve := fixture(12)
	first := twelve.Final
	first.Seq = 1
	first.Hypotheses = first.Hypotheses[:5]
	twelve.History = []session.Snapshot{first, twelve.Final}

	noHistory := rich()
	noHistory.History = nil

	tests := []struct {
		name string
		in   Input
		ids  []string // in the legend
		not  []string // not in the legend
	}{
		{"rich", rich(), []string{"evo/2", "gen/00", "evo/1", "gen/01", "gen/02", "gen/03"}, []string{"gen/04", "gen/05"}},
		{"top ten of twelve", twelve,
			[]string{"gen/00", "gen/01", "gen/02", "gen/03", "gen/04", "gen/05", "gen/06", "gen/07", "gen/08", "gen/09"},
			[]string{"gen/10", "gen/11"}},
		{"one checkpoint", fixture(3), []string{"gen/00", "gen/01", "gen/02"}, nil},
		{"history without the final", noHistory, []string{"evo/2", "gen/03"}, nil},
		{"no hypotheses", fixture(0), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			texts := svgText(t, render(t, tt.in).Chart)
			for _, id := range tt.ids {
				if !slices.Contains(texts, id) {
					t.Errorf("legend lacks %s; texts: %q", id, texts)
				}
			}
			for _, id := range tt.not {
				if slices.Contains(texts, id) {
					t.Errorf("chart shows %s, which is not in the top", id)
				}
			}
			if !slices.Contains(texts, "Elo") || !slices.Contains(texts, "Checkpoint") {
				t.Errorf("chart lacks its axis labels; texts: %q", texts)
			}
		})
	}
}

func TestSeries(t *testing.T) {
	in := rich()
	v := newView(in)
	hist := v.checkpoints()
	tests := []struct {
		id   string
		want plotter.XYs
	}{
		{"gen/00", plotter.XYs{{X: 1, Y: 1200}, {X: 2, Y: 1200}, {X: 4, Y: 1400}}},
		{"evo/1", plotter.XYs{{X: 2, Y: 1250}, {X: 4, Y: 1395}}}, // starts where it first appears
		{"evo/2", plotter.XYs{{X: 4, Y: 1450}}},
		{"nowhere", nil},
	}
	for _, tt := range tests {
		if got := series(tt.id, hist); !slices.Equal(got, tt.want) {
			t.Errorf("series(%s) = %v, want %v", tt.id, got, tt.want)
		}
	}

	// History out of order, without the final checkpoint: sorted, and the final added.
	in.History = []session.Snapshot{in.History[1], in.History[0]}
	var seqs []int
	for _, s := range newView(in).checkpoints() {
		seqs = append(seqs, s.Seq)
	}
	if !slices.Equal(seqs, []int{1, 2, 4}) {
		t.Errorf("checkpoints = %v, want seqs 1, 2, 4", seqs)
	}
}

func TestIntegerTicks(t *testing.T) {
	for _, r := range [][2]float64{{1, 3}, {3, 5}, {0, 1}, {1, 250}} {
		ticks := integerTicks{}.Ticks(r[0], r[1])
		labelled := 0
		for _, tk := range ticks {
			if tk.Value != float64(int(tk.Value)) {
				t.Errorf("range %v: tick at %v is not a whole checkpoint", r, tk.Value)
			}
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled == 0 {
			t.Errorf("range %v: no labelled tick", r)
		}
	}
}
