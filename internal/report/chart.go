package report

import (
	"bytes"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// Chart size, and the longest id the legend prints before shortening it.
const (
	chartWidth    = 9 * vg.Inch
	chartHeight   = 5 * vg.Inch
	legendIDChars = 32
)

// palette is Tableau 10: ten colours that stay distinguishable, one per top hypothesis.
var palette = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, color.RGBA{0xf2, 0x8e, 0x2b, 0xff},
	color.RGBA{0xe1, 0x57, 0x59, 0xff}, color.RGBA{0x76, 0xb7, 0xb2, 0xff},
	color.RGBA{0x59, 0xa1, 0x4f, 0xff}, color.RGBA{0xed, 0xc9, 0x48, 0xff},
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, color.RGBA{0xff, 0x9d, 0xa7, 0xff},
	color.RGBA{0x9c, 0x75, 0x5f, 0xff}, color.RGBA{0xba, 0xb0, 0xac, 0xff},
}

// checkpoints is the history the chart is drawn from, in seq order: the input's History,
// with the final snapshot added if History lacks it (or is empty).
func (v *view) checkpoints() []session.Snapshot {
	hist := slices.Clone(v.in.History)
	slices.SortStableFunc(hist, func(a, b session.Snapshot) int { return a.Seq - b.Seq })
	if !slices.ContainsFunc(hist, func(s session.Snapshot) bool { return s.Seq == v.snap.Seq }) {
		hist = append(hist, v.snap)
		slices.SortStableFunc(hist, func(a, b session.Snapshot) int { return a.Seq - b.Seq })
	}
	return hist
}

// series is the Elo of one hypothesis at each checkpoint that holds it (x: checkpoint
// seq). A hypothesis absent from earlier checkpoints starts where it first appears.
func series(id string, hist []session.Snapshot) plotter.XYs {
	var xys plotter.XYs
	for _, s := range hist {
		for _, e := range s.Hypotheses {
			if e.ID == id {
				if !math.IsNaN(e.Elo) && !math.IsInf(e.Elo, 0) {
					xys = append(xys, plotter.XY{X: float64(s.Seq), Y: e.Elo})
				}
				break
			}
		}
	}
	return xys
}

// renderChart draws elo.svg: one line (with a marker at each checkpoint, so a single
// checkpoint still shows) per top hypothesis, and a legend of their ids, best first, to
// the right of the plot.
func renderChart(v *view) ([]byte, error) {
	canvas := vgsvg.New(chartWidth, chartHeight)
	if err := drawChart(v, canvas); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// drawChart draws the chart on a canvas of chartWidth by chartHeight.
func drawChart(v *view, canvas vg.CanvasSizer) error {
	p := plot.New()
	sans(&p.Title.TextStyle)
	sans(&p.X.Label.TextStyle)
	sans(&p.Y.Label.TextStyle)
	sans(&p.X.Tick.Label)
	sans(&p.Y.Tick.Label)

	top := v.top()
	p.Title.Text = "Elo over time: the top " + strconv.Itoa(len(top))
	if len(top) == 0 {
		p.Title.Text = "Elo over time: no hypotheses to chart"
	}
	p.X.Label.Text = "Checkpoint"
	p.Y.Label.Text = "Elo"
	p.X.Tick.Marker = integerTicks{}
	p.Add(plotter.NewGrid())

	legend := plot.NewLegend()
	sans(&legend.TextStyle)
	legend.Top, legend.Left = true, true
	legend.ThumbnailWidth = vg.Points(24)
	legend.Padding = vg.Points(4)

	hist := v.checkpoints()
	for i, e := range top {
		xys := series(e.ID, hist)
		if len(xys) == 0 { // not even in the final snapshot's copy: cannot happen, but be safe
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		line.Color, line.Width = c, vg.Points(1.5)
		points.Color, points.Shape, points.Radius = c, plotutil.Shape(i), vg.Points(3)
		p.Add(line, points)
		legend.Add(research.Shorten(e.ID, legendIDChars), line, points)
	}

	padRanges(p)

	const margin = 8 // points
	dc := draw.Crop(draw.New(canvas), margin, -margin, margin, -margin)
	gap := vg.Points(12)
	r := legend.Rectangle(dc)
	if lw := r.Max.X - r.Min.X; lw > 0 {
		p.Draw(draw.Crop(dc, 0, -(lw + gap), 0, 0))
		legend.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-lw, 0, 0, -gap))
	} else {
		p.Draw(dc)
	}
	return nil
}

// padRanges widens the axes a little beyond the data, so that the markers of the best and
// worst ratings, and of the first and last checkpoints, are not cut by the plot's edges.
func padRanges(p *plot.Plot) {
	if p.X.Min > p.X.Max { // no data: leave the axes to the plot's defaults
		return
	}
	dx := (p.X.Max - p.X.Min) * 0.03
	if dx == 0 { // one checkpoint: show it between its neighbours
		dx = 1
	}
	dy := math.Max((p.Y.Max-p.Y.Min)*0.05, 10)
	p.X.Min, p.X.Max = p.X.Min-dx, p.X.Max+dx
	p.Y.Min, p.Y.Max = p.Y.Min-dy, p.Y.Max+dy
}

// sans sets a text style to the sans-serif variant of the default font, which reads
// better at chart sizes.
func sans(s *text.Style) { s.Font.Variant = "Sans" }

// integerTicks labels only whole checkpoint numbers: a "2.5" checkpoint does not exist.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value != math.Trunc(t.Value) {
			continue
		}
		if t.Label != "" {
			t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
		}
		out = append(out, t)
	}
	if len(out) == 0 || !slices.ContainsFunc(out, func(t plot.Tick) bool { return t.Label != "" }) {
		for x := math.Ceil(lo); x <= hi; x++ {
			out = append(out, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', 0, 64)})
		}
	}
	return out
}
