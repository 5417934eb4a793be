package library

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var benchSizes = flag.String("library.sizes", "10000,100000", "comma-separated library sizes for BenchmarkLibrary")

// vocabulary is a fixed list of words: biomedical terms and made-up ones, drawn with a
// Zipf-like law, as the words of real abstracts are.
func vocabulary(rng *rand.Rand) []string {
	words := strings.Fields(`tau microglia neuron synapse propagation spread aggregate seed kinase
		receptor uptake release exosome vesicle antibody inhibitor mouse patient brain cortex
		hippocampus protein phosphorylation autophagy lysosome inflammation astrocyte amyloid
		pathology disease early late model cell culture assay imaging biomarker therapy drug
		target mechanism pathway signalling expression gene variant risk clinical trial dose
		bacteria antibiotic tolerance resistance persister dormancy biofilm efflux growth`)
	const syllables = "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu xa xe xi zo zu"
	syl := strings.Fields(syllables)
	for len(words) < 3000 {
		var w strings.Builder
		for range 2 + rng.IntN(3) {
			w.WriteString(syl[rng.IntN(len(syl))])
		}
		words = append(words, w.String())
	}
	return words
}

// zipf draws a word index: the first words are far more common than the last.
func zipf(rng *rand.Rand, n int) int {
	return min(n-1, int(math.Floor(math.Exp(rng.Float64()*math.Log(float64(n))))-1))
}

func sentenceOf(rng *rand.Rand, words []string, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[zipf(rng, len(words))]
	}
	ws[0] = strings.ToUpper(ws[0][:1]) + ws[0][1:]
	return strings.Join(ws, " ") + "."
}

// writeSyntheticBibTeX writes n references as one BibTeX export, as Zotero would, with
// an accent here and there, and returns its size.
func writeSyntheticBibTeX(tb testing.TB, path string, n int) int64 {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	words := vocabulary(rng)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	for i := range n {
		b.Reset()
		fmt.Fprintf(&b, "@article{ref%d,\n  author = {", i)
		for a := range 1 + rng.IntN(6) {
			if a > 0 {
				b.WriteString(" and ")
			}
			fmt.Fprintf(&b, "%s, %s", strings.ToUpper(words[100+rng.IntN(2000)][:1])+words[100+rng.IntN(2000)][1:], strings.ToUpper(words[rng.IntN(len(words))][:1]))
			if rng.IntN(20) == 0 {
				b.WriteString(`M{\"u}ller`)
			}
		}
		fmt.Fprintf(&b, "},\n  title = {%s},\n  journal = {Journal of %s},\n  year = {%d},\n",
			strings.TrimSuffix(sentenceOf(rng, words, 8+rng.IntN(7)), "."), words[rng.IntN(200)], 1990+rng.IntN(36))
		if i%3 != 0 {
			fmt.Fprintf(&b, "  doi = {10.5555/bench.%d},\n", i)
		}
		b.WriteString("  abstract = {")
		for w := 0; w < 150+rng.IntN(100); {
			k := 10 + rng.IntN(20)
			b.WriteString(sentenceOf(rng, words, k) + " ")
			w += k
		}
		fmt.Fprintf(&b, "},\n  keywords = {%s; %s; %s}\n}\n\n", words[rng.IntN(300)], words[rng.IntN(300)], words[rng.IntN(300)])
		if _, err := f.WriteString(b.String()); err != nil {
			tb.Fatal(err)
		}
	}
	info, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	return info.Size()
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkLibrary builds the index of a synthetic library of each size (one BibTeX
// export of n references, 150 to 250 words of abstract each), then times searches of
// two to four words drawn as the abstracts' words are. Run with
//
//	go test -run '^$' -bench BenchmarkLibrary -benchtime 1x ./internal/library/
//
// It reports the parse and the whole build (parse, merge, index) in seconds, the index's
// size on disk, and the searches' p50 and p99 in milliseconds.
func BenchmarkLibrary(b *testing.B) {
	for _, s := range strings.Split(*benchSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir := b.TempDir()
			export := filepath.Join(dir, "library", "export.bib")
			os.MkdirAll(filepath.Dir(export), 0o755)
			size := writeSyntheticBibTeX(b, export, n)
			data, _ := os.ReadFile(export)
			// The export of 100,000 references is 177 MB, over DefaultLimits' cap of 64
			// MiB on one file: a library that size raises the cap (as the literature
			// server's --max-file-mb does), or is split over several exports.
			lim := Limits{FileBytes: 1 << 30}
			for b.Loop() {
				t0 := time.Now()
				refs, _ := lim.ParseBibTeX(data, "export.bib")
				parse := time.Since(t0)
				if len(refs) != n {
					b.Fatalf("parsed %d of %d", len(refs), n)
				}
				index := filepath.Join(b.TempDir(), "index")
				t0 = time.Now()
				l, err := OpenWithLimits(filepath.Dir(export), index, nil, lim)
				if err != nil {
					b.Fatal(err)
				}
				build := time.Since(t0)
				rng := rand.New(rand.NewPCG(2, 2))
				words := vocabulary(rand.New(rand.NewPCG(1, uint64(n))))
				var lat []time.Duration
				for range 500 {
					q := make([]string, 2+rng.IntN(3))
					for i := range q {
						q[i] = words[zipf(rng, 600)]
					}
					t0 := time.Now()
					if _, err := l.Search(context.Background(), Query{Text: strings.Join(q, " ")}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				l.Close()
				slices.Sort(lat)
				b.ReportMetric(float64(size)/1e6, "export-MB")
				b.ReportMetric(parse.Seconds(), "parse-s")
				b.ReportMetric(build.Seconds(), "build-s")
				b.ReportMetric(float64(dirSize(index))/1e6, "index-MB")
				b.ReportMetric(float64(lat[len(lat)/2])/1e6, "search-p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "search-p99-ms")
			}
		})
	}
}
