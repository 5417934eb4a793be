package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// roundPrefix is what every prompt of a round starts with, and hypothesisText a
// hypothesis as a match prompt shows it: paragraphs well above minPiece.
func roundPrefix(round int) string {
	return fmt.Sprintf("You are an agent of an AI co-scientist, a team of agents that helps a scientist reach a research goal.\n\n"+
		"Research goal:\nFind druggable mechanisms that slow tau propagation\n\n"+
		"Latest meta-review (round %d): reviews keep finding that the hypotheses name no mechanism a drug could reach; propose ones that do.\n\n", round)
}

func hypothesisText(label string, i int) string {
	return fmt.Sprintf("Hypothesis %s (h-%04d): Microbial competition number %d limits tau propagation\n"+
		"Statement: We hypothesise that microbial competition %d, mediated by a transcriptional repressor, limits tau propagation under chronic stress.\n"+
		"Rationale: Built by iterative assumption identification on three assumptions, each plausible on its own.\n\n", label, i, i, i)
}

func matchPrompt(round, a, b int) string {
	return roundPrefix(round) +
		"You are the ranking agent. Judge a match between the two hypotheses below: which better serves the research goal?\n\n" +
		hypothesisText("A", a) + hypothesisText("B", b)
}

// TestPromptsReadBackExactly: whatever a prompt holds (blank lines anywhere, runs of them,
// no text, bytes that are not UTF-8, a paragraph that starts like a compressed record),
// the turn reads back with that prompt, byte for byte, on both stores, and so does every
// other field of the turn.
func TestPromptsReadBackExactly(t *testing.T) {
	long := strings.Repeat("a sentence of a paragraph that is long enough to be a piece. ", 4)
	prompts := map[string]string{
		"empty":                    "",
		"short":                    "Propose...",
		"one long paragraph":       long,
		"paragraphs":               long + "\n\n" + long + "\n\nshort\n\n" + long,
		"blank lines in a row":     "\n\n\n\n" + long + "\n\n\n\n\n" + long + "\n\n\n",
		"only blank lines":         "\n\n\n\n\n",
		"carriage returns":         long + "\r\n\r\n" + long,
		"not UTF-8":                "\xff\xfe" + long + "\n\n\x80\x81" + long,
		"starts like a zstd frame": zstdMagic + long + "\n\n" + zstdMagic + "\n\n" + long,
		"a match":                  matchPrompt(3, 1, 2),
	}
	eachStore(t, func(t *testing.T, s *Store) {
		for name, prompt := range prompts {
			want := Turn{
				ID: "turn/" + name, Agent: "ranking", Prompt: prompt, Result: json.RawMessage(`{"winner":"h-1"}`),
				Usage:    research.Usage{PromptTokens: 100, CompletionTokens: 20, Requests: 1},
				Finished: "2026-01-02T03:04:05Z",
				Given:    []research.ToolResult{{CallID: "c1", Name: "search", Source: "abc"}},
				Said:     &research.ToolStep{Text: "I will search."},
			}
			if err := s.PutTurn(tctx(t), "s", want); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, found, err := reopen(s).Turn(tctx(t), "s", want.ID)
			if err != nil || !found {
				t.Fatalf("%s: found %v, %v", name, found, err)
			}
			if got.Prompt != want.Prompt {
				t.Errorf("%s: the prompt reads back as %q, want %q", name, got.Prompt, want.Prompt)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the turn reads back as %+v, want %+v", name, got, want)
			}
		}
	})
}

// TestPiecesStoredOnce: the matches of two rounds between 20 hypotheses, each prompt
// holding the round's prefix and both hypotheses' texts. Each paragraph is stored once per
// session, whatever number of prompts hold it, and the turns' records with their pieces
// take a fraction of the prompts' bytes.
func TestPiecesStoredOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		paragraphs := map[string]bool{}
		plain := 0
		for round := 1; round <= 2; round++ {
			for a := range 20 {
				for _, b := range []int{(a + 1) % 20, (a + 7) % 20} {
					p := matchPrompt(round, a, b)
					plain += len(p)
					for para := range strings.SplitAfterSeq(p, "\n\n") {
						if len(para) >= minPiece {
							paragraphs[para] = true
						}
					}
					id := fmt.Sprintf("match-%d-h-%04d-h-%04d", round, a, b)
					if err := s.PutTurn(tctx(t), "s", Turn{ID: id, Agent: "ranking", Prompt: p, Result: json.RawMessage(`{}`)}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		keys, err := s.Backend().List(tctx(t), "s", piecesDir+"/")
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != len(paragraphs) {
			t.Errorf("%d pieces stored for %d distinct paragraphs", len(keys), len(paragraphs))
		}
		// No turn record holds a paragraph's text, only its digest.
		turns, err := s.Backend().List(tctx(t), "s", turnsDir+"/")
		if err != nil || len(turns) != 80 {
			t.Fatalf("%d turn records, %v; want 80", len(turns), err)
		}
		stored := 0
		for _, k := range append(turns, keys...) {
			b, err := s.Backend().Get(tctx(t), "s", k)
			if err != nil {
				t.Fatal(err)
			}
			stored += len(b)
			if !strings.HasPrefix(k, turnsDir+"/") {
				continue
			}
			if b, err = unpack(b); err != nil {
				t.Fatal(err)
			}
			for para := range paragraphs {
				if strings.Contains(string(b), strings.TrimSpace(para)) {
					t.Fatalf("turn record %s holds the text of a piece: %s", k, b)
				}
			}
		}
		t.Logf("80 turns: %d bytes of prompts stored in %d bytes, %d pieces", plain, stored, len(keys))
	})
}

// TestTurnRetriedWritesNothingTwice: a turn stored again (a retried activity), or stored
// by two writers at once with prompts that share pieces, leaves exactly one record of the
// turn and one of each piece, and reads back.
func TestTurnRetriedWritesNothingTwice(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		const writers = 8
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i := range writers {
			wg.Go(func() {
				// A store of its own per writer, as on separate worker hosts: none knows
				// which pieces another wrote.
				w := reopen(s)
				errs[i] = w.PutTurn(tctx(t), "s", Turn{ID: fmt.Sprintf("match-%d", i%2), Prompt: matchPrompt(1, i%2, 2)})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}
		before := files(t, s, "s")
		for i := range 2 {
			if err := s.PutTurn(tctx(t), "s", Turn{ID: fmt.Sprintf("match-%d", i), Prompt: matchPrompt(1, i, 2)}); err != nil {
				t.Fatal(err)
			}
			got, found, err := s.Turn(tctx(t), "s", fmt.Sprintf("match-%d", i))
			if err != nil || !found || got.Prompt != matchPrompt(1, i, 2) {
				t.Errorf("turn %d: found %v, %v, prompt %q", i, found, err, got.Prompt)
			}
		}
		after := files(t, s, "s")
		// The prefix's 3 paragraphs, the ranking agent's, hypotheses 0, 1 and 2 as A or B.
		if !slices.Equal(before, after) || len(after) != 2+4+3 {
			t.Errorf("records before the retries %v, after %v; want the 2 turns and their 7 pieces, once", before, after)
		}
		noDirTemps(t, s)
	})
}

// TestOldRecordsStillRead: records written before the store compressed anything and split
// prompts (indented JSON, the prompt whole) read as they always did, and a checkpoint
// stored compressed may build on one stored plain.
func TestOldRecordsStillRead(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := tctx(t)
		s.Migrating(true) // the old records are written plain: an encrypted store reads them while migrating
		old := Turn{ID: "generate-h-0001", Agent: "generation", Prompt: matchPrompt(1, 1, 2), Result: json.RawMessage(`{"hypothesis_id": "h-0001"}`),
			Usage: research.Usage{PromptTokens: 686, CompletionTokens: 79, Requests: 1}, Finished: "2026-01-02T03:04:05Z"}
		data, err := encode("", old) // what PutTurn wrote before
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Backend().Put(ctx, "s", "turns/generate-h-0001.json", data, true); err != nil {
			t.Fatal(err)
		}
		got, found, err := s.Turn(ctx, "s", old.ID)
		if err != nil || !found {
			t.Fatalf("the old turn record: found %v, %v", found, err)
		}
		var a, b any
		json.Unmarshal(got.Result, &a)
		json.Unmarshal(old.Result, &b)
		if got.Prompt != old.Prompt || !reflect.DeepEqual(a, b) || got.Usage != old.Usage || got.Finished != old.Finished {
			t.Errorf("the old turn record reads as %+v, want %+v", got, old)
		}

		one := bigSnapshot("s", 1, 20)
		data, err = encode("", storedCheckpoint{Snapshot: one})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Backend().Commit(ctx, Commit{SessionID: "s", Key: checkpointKey(1), Data: data}); err != nil {
			t.Fatal(err)
		}
		two := bigSnapshot("s", 2, 1)
		two.Hypotheses[0].ID = "gen/new"
		if _, err := s.PutCheckpointOver(ctx, 1, two, nil); err != nil {
			t.Fatal(err)
		}
		fresh := reopen(s)
		if snap, err := fresh.Checkpoint(ctx, "s", 1); err != nil || !reflect.DeepEqual(snap, one) {
			t.Errorf("the old checkpoint reads as %d hypotheses, %v", len(snap.Hypotheses), err)
		}
		if snap, err := fresh.Checkpoint(ctx, "s", 2); err != nil || !reflect.DeepEqual(snap, session.Merge(one, two)) {
			t.Errorf("the new checkpoint over the old one reads as %d hypotheses, %v", len(snap.Hypotheses), err)
		}
	})
}

// TestDamagedTurn: a turn record truncated or garbled, or a piece of its prompt missing,
// truncated or changed, reads as a *DamagedError naming the session and the turn record
// (and the piece, where one is at fault), never as a turn not yet done (which would run
// the model again, and keep the damaged record) nor as another prompt. Repaired, the turn
// reads again.
func TestDamagedTurn(t *testing.T) {
	eachPlainStore(t, func(t *testing.T, s *Store) {
		ctx := tctx(t)
		const sid, id = "s-damaged", "match-1"
		prompt := matchPrompt(1, 1, 2)
		if err := s.PutTurn(ctx, sid, Turn{ID: id, Agent: "ranking", Prompt: prompt, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		turnKey := turnsDir + "/" + id + ".json"
		sound, err := s.Backend().Get(ctx, sid, turnKey)
		if err != nil {
			t.Fatal(err)
		}
		// The piece of hypothesis 1's paragraph, long enough to be stored compressed.
		pk := pieceKey(pieceDigest(hypothesisText("A", 1)))
		piece, err := s.Backend().Get(ctx, sid, pk)
		if err != nil {
			t.Fatal(err)
		}
		if !compressed(piece) {
			t.Fatalf("piece %s is stored plain: %q", pk, piece)
		}
		otherText := []byte(strings.Replace(hypothesisText("A", 1), "limits", "speeds", 1))
		for _, tc := range []struct {
			name  string
			key   string
			data  []byte // nil: remove the record
			blame string // what the error must name besides the turn record
		}{
			{"turn record truncated", turnKey, sound[:len(sound)/2], ""},
			{"turn record garbled", turnKey, append(slices.Clone(sound[:len(sound)-9]), "garbled!!"...), ""},
			{"turn record not JSON", turnKey, pack([]byte(`{"id": "match-1", "prompt_parts": [{"piece": 7}]}`)), ""},
			{"turn record naming no piece", turnKey, pack([]byte(`{"id": "match-1", "prompt_parts": [{"piece": "../../../etc/passwd"}]}`)), ""},
			{"turn record with an empty part", turnKey, pack([]byte(`{"id": "match-1", "prompt_parts": [{}]}`)), ""},
			{"piece missing", pk, nil, s.Where(sid, pk)},
			{"piece truncated", pk, piece[:len(piece)-5], s.Where(sid, pk)},
			{"piece changed", pk, otherText, s.Where(sid, pk)},
			{"piece changed, and compressed", pk, pack(otherText), s.Where(sid, pk)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.data == nil {
					removeRecords(t, s, sid, tc.key)
				} else if err := s.Backend().Put(ctx, sid, tc.key, tc.data, false); err != nil {
					t.Fatal(err)
				}
				_, found, err := reopen(s).Turn(ctx, sid, id)
				var damaged *DamagedError
				switch {
				case err == nil:
					t.Fatalf("the turn reads (found %v) without an error", found)
				case !errors.As(err, &damaged) || errors.Is(err, fs.ErrNotExist):
					t.Errorf("error %v (%T) is not a *DamagedError", err, err)
				case damaged.SessionID != sid || damaged.Record != s.Where(sid, turnKey):
					t.Errorf("error %q names session %q and record %q; want %q and %q", err, damaged.SessionID, damaged.Record, sid, s.Where(sid, turnKey))
				case !strings.Contains(err.Error(), tc.blame):
					t.Errorf("error %q does not name %s", err, tc.blame)
				}
				restore := sound
				if tc.key == pk {
					restore = piece
				}
				if err := s.Backend().Put(ctx, sid, tc.key, restore, false); err != nil {
					t.Fatal(err)
				}
				got, found, err := reopen(s).Turn(ctx, sid, id)
				if err != nil || !found || got.Prompt != prompt {
					t.Errorf("after the repair: found %v, %v", found, err)
				}
			})
		}
	})
}

// TestCopiedTurnFindsItsPieces: a turn record copied to another session (as a branch
// shares its parent's records) brings the pieces its prompt names, and reads there, even
// once the session it came from is gone. In a directory both are links to the same files.
func TestCopiedTurnFindsItsPieces(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := tctx(t)
		prompt := matchPrompt(1, 1, 2)
		if err := s.PutTurn(ctx, "parent", Turn{ID: "match-1", Prompt: prompt}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutHypothesis(ctx, "parent", hyp("h1", "t")); err != nil {
			t.Fatal(err)
		}
		if err := s.copyRecords(ctx, "parent", "child", []string{"turns/match-1.json", "hypotheses/h1.json", "turns/missing.json"}); err != nil {
			t.Fatal(err)
		}
		removeRecords(t, s, "parent", "")
		got, found, err := reopen(s).Turn(ctx, "child", "match-1")
		if err != nil || !found || got.Prompt != prompt {
			t.Fatalf("the copied turn: found %v, %v, prompt %q", found, err, got.Prompt)
		}
		if got := files(t, s, "child"); len(got) != 1+1+6 {
			t.Errorf("the child holds %v; want the turn, the hypothesis and the turn's 6 pieces", got)
		}
	})
	// Links, not copies, in a directory.
	d := open(t)
	ctx := tctx(t)
	if err := d.PutTurn(ctx, "parent", Turn{ID: "match-1", Prompt: matchPrompt(1, 1, 2)}); err != nil {
		t.Fatal(err)
	}
	if err := d.copyRecords(ctx, "parent", "child", []string{"turns/match-1.json"}); err != nil {
		t.Fatal(err)
	}
	pk := pieceKey(pieceDigest(hypothesisText("A", 1)))
	for _, k := range []string{"turns/match-1.json", pk} {
		fi, err := os.Stat(d.dir.Where("child", k))
		if err != nil {
			t.Fatal(err)
		}
		if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 2 {
			t.Errorf("%s has %d links; want 2, the parent's and the child's", k, n)
		}
	}
}

// BenchmarkTurnRecord is the store's cost of a match turn's record, its prompt as long as
// the offline model's (about 3 KB: the round's prefix and two hypotheses of 1.2 KB each),
// written (PutTurn, pieces and all, one new match each time among 100 hypotheses) and read
// back (Turn, by a store that remembers nothing).
func BenchmarkTurnRecord(b *testing.B) {
	eachStoreB(b, func(b *testing.B, s *Store) {
		ctx := tctx(b)
		prompt := func(i int) string {
			return roundPrefix(1) + "You are the ranking agent. Judge a match between the two hypotheses below.\n\n" +
				longHypothesis("A", i%100) + longHypothesis("B", (i*7+1)%100)
		}
		// -count runs a sub-benchmark again in the same store: each write a new turn.
		i := 0
		b.Run("write", func(b *testing.B) {
			for b.Loop() {
				i++
				if err := s.PutTurn(ctx, "bench", Turn{ID: fmt.Sprintf("match-%d", i), Agent: "ranking", Prompt: prompt(i), Result: json.RawMessage(`{"winner":"h-0001"}`)}); err != nil {
					b.Fatal(err)
				}
			}
		})
		fresh := reopen(s)
		b.Run("read", func(b *testing.B) {
			i := 0
			for b.Loop() {
				i = i%100 + 1
				if t, found, err := fresh.Turn(ctx, "bench", fmt.Sprintf("match-%d", i)); err != nil || !found || t.Prompt != prompt(i) {
					b.Fatal(found, err)
				}
			}
		})
	})
}

// longHypothesis is hypothesis i as a match prompt shows it, as long as the offline
// model's (about 1.2 KB).
func longHypothesis(label string, i int) string {
	return fmt.Sprintf("Hypothesis %s (h-%04d): Microbial competition limits tau propagation under chronic stress %d\n"+
		"Statement: We hypothesise that microbial competition %d, mediated by a transcriptional repressor, limits tau propagation under chronic stress, and that this in turn shapes druggable mechanisms.\n"+
		"Rationale: Built by iterative assumption identification on three assumptions, each plausible on its own: (1) microbial competition operates under chronic stress; (2) a transcriptional repressor %d is present where tau propagation is observed; (3) a change in the transcriptional repressor precedes the change in druggable mechanisms. Together they imply the hypothesis. It is designed to meet the plan's criterion: testability: a decisive experiment on tau propagation within a year.\n"+
		"Testable predictions:\n"+
		"- Blocking the transcriptional repressor %d with CRISPR interference should reduce tau propagation relative to matched controls.\n"+
		"- A dose–response relationship should link levels of the transcriptional repressor to druggable mechanisms.\n"+
		"- Restoring the transcriptional repressor after its loss should rescue the effect on druggable mechanisms in model %d.\n\n", label, i, i, i, i, i, i)
}
