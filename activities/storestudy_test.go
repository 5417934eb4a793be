package activities_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/cosci-dev/cosci/internal/store"
)

// The study behind the store's choices (BENCHMARKS.md, issue #21), on the records of
// BenchmarkStoreBytes' session in a directory (-store.study): how much the session's turn
// records and prompts take if their prompts are cut into pieces in other ways, and what
// other compressors make of its records, in bytes and time.

// study logs both tables.
func study(b *testing.B, root string, hypotheses int) {
	turns, records := sessionRecords(b, root)
	splits(b, turns, hypotheses)
	codecs(b, records)
	others(b, root, hypotheses)
}

// others weighs what compressing the records the store keeps plain would save: each file
// once, by kind, compressed with zstd level 3.
func others(b *testing.B, root string, hypotheses int) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true))
	plain, packed := map[string]int{}, map[string]int{}
	storedFiles(b, root, func(kind, path string, _ fs.FileInfo) error {
		if kind == "turns" || kind == "pieces" || kind == "checkpoints" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		plain[kind] += len(raw)
		packed[kind] += len(enc.EncodeAll(raw, nil))
		return nil
	})
	var lines []string
	for _, kind := range slices.Sorted(maps.Keys(plain)) {
		lines = append(lines, fmt.Sprintf("%-18s %9d B plain, %9d B compressed: %7.1f B/hypothesis saved",
			kind, plain[kind], packed[kind], float64(plain[kind]-packed[kind])/float64(hypotheses)))
	}
	b.Logf("the records kept plain, if they were compressed:\n%s", strings.Join(lines, "\n"))
}

// storedTurn is a turn as the study reads it back: its prompt, and the rest of its record.
type storedTurn struct {
	session string
	prompt  string
	rest    map[string]json.RawMessage // the record's JSON without its prompt
}

// sessionRecords reads every session's turns back through the store, and the plain JSON
// or text of every turn record, piece and checkpoint as stored.
func sessionRecords(b *testing.B, root string) (turns []storedTurn, records map[string][][]byte) {
	st, err := store.Open(b.Context(), root)
	if err != nil {
		b.Fatal(err)
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		b.Fatal(err)
	}
	records = map[string][][]byte{}
	for _, d := range dirs {
		id := d.Name() // the benchmark's session ids need no escaping
		for _, kind := range []string{"turns", "pieces", "checkpoints"} {
			keys, err := st.Backend().List(b.Context(), id, kind+"/")
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range keys {
				raw, err := st.Backend().Get(b.Context(), id, k)
				if err != nil {
					b.Fatal(err)
				}
				plain, err := store.Plain(raw)
				if err != nil {
					b.Fatal(err)
				}
				records[kind] = append(records[kind], plain)
				if kind != "turns" {
					continue
				}
				t, found, err := st.Turn(b.Context(), id, strings.TrimSuffix(strings.TrimPrefix(k, "turns/"), ".json"))
				if err != nil || !found {
					b.Fatalf("turn %s of %s: found %v, %v", k, id, found, err)
				}
				var rest map[string]json.RawMessage
				if err := json.Unmarshal(plain, &rest); err != nil {
					b.Fatal(err)
				}
				delete(rest, "prompt")
				delete(rest, "prompt_parts")
				turns = append(turns, storedTurn{id, t.Prompt, rest})
			}
		}
	}
	return turns, records
}

// splits weighs the turn records with their pieces when prompts are cut at blank lines or
// at every line, into pieces of at least min bytes (shorter text stays in the record), and
// with no pieces at all: the records and each session's distinct pieces, compressed (a
// piece only where that makes it smaller).
func splits(b *testing.B, turns []storedTurn, hypotheses int) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	type part struct {
		Text  string `json:"text,omitempty"`
		Piece string `json:"piece,omitempty"`
	}
	var lines []string
	for _, sep := range []string{"", "\n\n", "\n"} {
		for _, minPiece := range []int{32, 64, 128, 256} {
			if sep == "" && minPiece > 32 {
				break
			}
			var recordBytes, pieceBytes, n int
			seen := map[string]bool{}
			for _, t := range turns {
				rec := map[string]any{}
				for k, v := range t.rest {
					rec[k] = v
				}
				if sep == "" {
					rec["prompt"] = t.prompt
				} else {
					var parts []part
					for para := range strings.SplitAfterSeq(t.prompt, sep) {
						if len(para) < minPiece {
							if len(parts) > 0 && parts[len(parts)-1].Piece == "" {
								parts[len(parts)-1].Text += para
							} else {
								parts = append(parts, part{Text: para})
							}
							continue
						}
						sum := sha256.Sum256([]byte(para))
						d := fmt.Sprintf("%x", sum[:16])
						parts = append(parts, part{Piece: d})
						if !seen[t.session+d] {
							seen[t.session+d] = true
							n++
							pieceBytes += min(len(enc.EncodeAll([]byte(para), nil)), len(para))
						}
					}
					rec["prompt_parts"] = parts
				}
				js, err := json.Marshal(rec)
				if err != nil {
					b.Fatal(err)
				}
				recordBytes += len(enc.EncodeAll(js, nil))
			}
			name := map[string]string{"": "no pieces, the record compressed", "\n\n": "paragraphs", "\n": "lines"}[sep]
			if sep != "" {
				name += fmt.Sprintf(" of %d B or more", minPiece)
			}
			lines = append(lines, fmt.Sprintf("%-40s %6d pieces  records %9d B  pieces %9d B  %7.1f B/hypothesis",
				name, n, recordBytes, pieceBytes, float64(recordBytes+pieceBytes)/float64(hypotheses)))
		}
	}
	b.Logf("%d turns, their records and pieces, cut in other ways:\n%s", len(turns), strings.Join(lines, "\n"))
}

// codecs weighs compressors on the session's records as they are before compression:
// bytes, and the time to compress and decompress a record (the best of 5 passes over all).
func codecs(b *testing.B, records map[string][][]byte) {
	type codec struct {
		name      string
		enc, dec  func([]byte) []byte
		turnsOnly bool
	}
	zdec, _ := zstd.NewReader(nil)
	zstdAt := func(level zstd.EncoderLevel, opts ...zstd.EOption) (func([]byte) []byte, func([]byte) []byte) {
		e, _ := zstd.NewWriter(nil, append([]zstd.EOption{zstd.WithEncoderLevel(level)}, opts...)...)
		d := zdec
		if len(opts) > 0 {
			d, _ = zstd.NewReader(nil, zstd.WithDecoderDictRaw(1, turnDictionary))
		}
		return func(p []byte) []byte { return e.EncodeAll(p, nil) }, func(z []byte) []byte { p, _ := d.DecodeAll(z, nil); return p }
	}
	var buf bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&buf, 6)
	fw, _ := flate.NewWriter(&buf, 6)
	var gr gzip.Reader
	fr := flate.NewReader(nil)
	compressWith := func(w interface {
		io.WriteCloser
		Reset(io.Writer)
	}) func([]byte) []byte {
		return func(p []byte) []byte {
			buf.Reset()
			w.Reset(&buf)
			w.Write(p)
			w.Close()
			return bytes.Clone(buf.Bytes())
		}
	}
	var all []codec
	e, d := zstdAt(zstd.SpeedDefault)
	all = append(all, codec{"zstd level 3 (the store's)", e, d, false})
	e, d = zstdAt(zstd.SpeedBetterCompression)
	all = append(all, codec{"zstd level 7", e, d, false})
	e, d = zstdAt(zstd.SpeedDefault, zstd.WithEncoderDictRaw(1, turnDictionary))
	all = append(all, codec{"zstd level 3, a dictionary", e, d, true})
	all = append(all,
		codec{"gzip level 6 (standard library)", compressWith(gw), func(z []byte) []byte {
			gr.Reset(bytes.NewReader(z))
			p, _ := io.ReadAll(&gr)
			return p
		}, false},
		codec{"deflate level 6 (standard library)", compressWith(fw), func(z []byte) []byte {
			fr.(flate.Resetter).Reset(bytes.NewReader(z), nil)
			p, _ := io.ReadAll(fr)
			return p
		}, false})
	var lines []string
	for _, kind := range []string{"turns", "pieces", "checkpoints"} {
		recs := records[kind]
		plain := 0
		for _, r := range recs {
			plain += len(r)
		}
		lines = append(lines, fmt.Sprintf("%s: %d records, %d B before compression", kind, len(recs), plain))
		for _, c := range all {
			if c.turnsOnly && kind != "turns" {
				continue
			}
			var zs [][]byte
			size := 0
			enc := best(func() {
				zs, size = zs[:0], 0
				for _, r := range recs {
					z := c.enc(r)
					zs = append(zs, z)
					size += len(z)
				}
			})
			dec := best(func() {
				for i, z := range zs {
					if p := c.dec(z); !bytes.Equal(p, recs[i]) {
						b.Fatalf("%s does not read back", c.name)
					}
				}
			})
			lines = append(lines, fmt.Sprintf("  %-36s %9d B (%.3f)  compress %7.1f µs  decompress %6.1f µs a record",
				c.name, size, float64(size)/float64(plain), us(enc, len(recs)), us(dec, len(recs))))
		}
	}
	b.Logf("compressors on the session's records:\n%s", strings.Join(lines, "\n"))
}

// turnDictionary is the JSON a turn record's fields start with, for a raw zstd dictionary.
var turnDictionary = []byte(`{"id":"match-","agent":"ranking","result":{"winner":"h-","usage":{"prompt_tokens":,"completion_tokens":,"requests":1}},"usage":{"prompt_tokens":,"completion_tokens":,"requests":1},"finished":"2026-11-25T01:44:57.962910167Z","prompt_parts":[{"piece":"},{"piece":"},{"text":"`)

// best is the shortest of 5 runs of f.
func best(f func()) time.Duration {
	m := time.Duration(1 << 62)
	for range 5 {
		t := time.Now()
		f()
		m = min(m, time.Since(t))
	}
	return m
}

func us(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(max(n, 1)) }
