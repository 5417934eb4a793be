package stats

// wDist is the exact null distribution of W for groups of nx and ny without ties.
type wDist struct {
	freq  []float64 // freq[k]: the number of orderings with W = k
	total float64
}

// exactW counts orderings by the largest pooled value: it is an x (above all ny y's, adding
// ny to W) or a y (adding nothing), so f(i, j; k) = f(i-1, j; k-j) + f(i, j-1; k). Only
// additions, so no cancellation in the tails (R's cwilcox uses the same recursion).
func exactW(nx, ny int) wDist {
	// prev[i] holds f(i, j-1; .), cur[i] f(i, j; .).
	prev := make([][]float64, nx+1)
	for i := range prev {
		prev[i] = []float64{1} // f(i, 0; 0) = 1
	}
	for j := 1; j <= ny; j++ {
		cur := make([][]float64, nx+1)
		cur[0] = []float64{1}
		for i := 1; i <= nx; i++ {
			f := make([]float64, i*j+1)
			copy(f, prev[i])
			for k, v := range cur[i-1] {
				f[k+j] += v
			}
			cur[i] = f
		}
		prev = cur
	}
	d := wDist{freq: prev[nx]}
	for _, v := range d.freq {
		d.total += v
	}
	return d
}

// cdf is R's pwilcox: P(W <= q).
func (d wDist) cdf(q float64) float64 {
	p := 0.0
	for k := 0; k < len(d.freq) && float64(k) <= q; k++ {
		p += d.freq[k]
	}
	return min(1, p/d.total)
}

// above is P(W > q), summed from the top so that small tails keep their digits.
func (d wDist) above(q float64) float64 {
	p := 0.0
	for k := len(d.freq) - 1; k >= 0 && float64(k) > q; k-- {
		p += d.freq[k]
	}
	return min(1, p/d.total)
}

// quantile is R's qwilcox for p <= 0.5: the smallest q with P(W <= q) >= p, with R's
// allowance of 10 eps for rounding.
func (d wDist) quantile(p float64) int {
	p -= 10 * eps
	c := 0.0
	for q, v := range d.freq {
		c += v / d.total
		if c >= p {
			return q
		}
	}
	return len(d.freq) - 1
}
