package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// Round trips of each kind of record: hypotheses, reviews, turns, the plan, debates,
// meta-reviews, the overview and the report files.

func TestHypothesisRoundTrip(t *testing.T) { eachStore(t, testHypothesisRoundTrip) }

func testHypothesisRoundTrip(t *testing.T, s *Store) {
	ids := []string{"h1", "gen/3/7", "a b", "%2F", ".x", "ü/∑", `q"uote`}
	for _, sid := range []string{"s1", "wf/run:1"} {
		for _, id := range ids {
			want := hyp(id, "title "+id)
			if err := s.PutHypothesis(tctx(t), sid, want); err != nil {
				t.Fatalf("PutHypothesis(%q, %q): %v", sid, id, err)
			}
			got, err := s.Hypothesis(tctx(t), sid, id)
			if err != nil {
				t.Fatalf("Hypothesis(%q, %q): %v", sid, id, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Hypothesis(%q, %q) = %+v, want %+v", sid, id, got, want)
			}
		}
		// One record per id, all directly under hypotheses/: "/" never made a subdirectory.
		keys, err := s.Backend().List(tctx(t), sid, hypothesesDir+"/")
		if err != nil {
			t.Fatal(err)
		}
		if all := files(t, s, sid); len(keys) != len(ids) || len(all) != len(ids) {
			t.Errorf("session %q: %d records under hypotheses/ and %v in all, want %d", sid, len(keys), all, len(ids))
		}
	}
	noDirTemps(t, s)

	if err := s.PutHypothesis(tctx(t), "s1", research.Hypothesis{Title: "no id"}); err == nil {
		t.Error("PutHypothesis without an ID succeeded, want an error")
	}
}

func TestHypotheses(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		s.PutHypothesis(tctx(t), "s", hyp("a", "A"))
		s.PutHypothesis(tctx(t), "s", hyp("b/c", "BC"))

		got, err := s.Hypotheses(tctx(t), "s", []string{"a", "b/c", "a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["a"].Title != "A" || got["b/c"].Title != "BC" {
			t.Errorf("Hypotheses = %v", got)
		}

		got, err = s.Hypotheses(tctx(t), "s", []string{"a", "gone"})
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), `"gone"`) {
			t.Errorf("Hypotheses with a missing id: err = %v, want one naming it and wrapping fs.ErrNotExist", err)
		}
		if len(got) != 1 || got["a"].Title != "A" {
			t.Errorf("Hypotheses with a missing id returned %v, want the one found", got)
		}
	})
}

func TestReviewsOrder(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		put := []struct {
			n    int
			typ  string
			crit string
		}{
			{10, research.ReviewFull, "full 10"},
			{0, "scientist-note", "scientist 0"}, // unknown types sort after known ones
			{2, research.ReviewFull, "full 2"},
			{0, research.ReviewInitial, "initial 0"},
			{0, research.ReviewTournament, "tournament 0"},
			{1, "a/b", "a/b 1"},
		}
		for _, p := range put {
			r := research.Review{HypothesisID: "gen/1", Type: p.typ, Critique: p.crit, Verdict: "accept",
				Scores: research.Scores{Novelty: 7, Plausibility: 6, Testability: 8, Safety: 9}}
			if err := s.PutReview(tctx(t), "s", p.n, r); err != nil {
				t.Fatalf("PutReview(%d, %q): %v", p.n, p.typ, err)
			}
		}
		s.PutReview(tctx(t), "s", 0, research.Review{HypothesisID: "other", Type: "full", Critique: "other"})

		got, err := s.Reviews(tctx(t), "s", "gen/1")
		if err != nil {
			t.Fatal(err)
		}
		var crits []string
		for _, r := range got {
			crits = append(crits, r.Critique)
		}
		want := []string{"initial 0", "full 2", "full 10", "tournament 0", "a/b 1", "scientist 0"}
		if !reflect.DeepEqual(crits, want) {
			t.Errorf("Reviews order = %q\nwant             %q", crits, want)
		}
		if got[0].Scores.Novelty != 7 {
			t.Errorf("scores did not round-trip: %+v", got[0].Scores)
		}

		bad := []struct {
			name string
			n    int
			r    research.Review
		}{
			{"no hypothesis id", 0, research.Review{Type: "full"}},
			{"no type", 0, research.Review{HypothesisID: "h"}},
			{"negative index", -1, research.Review{HypothesisID: "h", Type: "full"}},
		}
		for _, b := range bad {
			if err := s.PutReview(tctx(t), "s", b.n, b.r); err == nil {
				t.Errorf("PutReview with %s succeeded, want an error", b.name)
			}
		}
	})
}

func TestTurnRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		want := Turn{
			ID: "gen/h-3/attempt:1", Agent: "generation", Prompt: "Propose...",
			Result:   json.RawMessage(`{"title":"x"}`),
			Usage:    research.Usage{PromptTokens: 100, CompletionTokens: 20, Requests: 1},
			Finished: "2026-01-02T03:04:05Z",
		}
		if err := s.PutTurn(tctx(t), "s", want); err != nil {
			t.Fatal(err)
		}
		got, found, err := s.Turn(tctx(t), "s", want.ID)
		if err != nil || !found {
			t.Fatalf("Turn = found %v, err %v", found, err)
		}
		// MarshalIndent re-indents the raw result; compare it as JSON.
		var a, b any
		json.Unmarshal(got.Result, &a)
		json.Unmarshal(want.Result, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("Result = %s, want %s", got.Result, want.Result)
		}
		got.Result, want.Result = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Turn = %+v, want %+v", got, want)
		}
	})
}

func TestPlanRoundTrip(t *testing.T) { eachStore(t, testPlanRoundTrip) }

func testPlanRoundTrip(t *testing.T, s *Store) {
	if _, err := s.Plan(tctx(t), "s"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Plan before PutPlan: err = %v, want fs.ErrNotExist", err)
	}
	first := research.Plan{Preferences: []string{"p"}, Constraints: []string{"c"}, Criteria: []string{"k"}, Summary: "first"}
	second := first
	second.Summary = "second"
	for _, p := range []research.Plan{first, second} {
		if err := s.PutPlan(tctx(t), "s", p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Plan(tctx(t), "s")
	if err != nil || !reflect.DeepEqual(got, first) {
		t.Errorf("Plan = %+v, %v; want the first plan %+v (written once)", got, err, first)
	}
	if _, err := s.Backend().Get(tctx(t), "s", "plan.json"); err != nil {
		t.Errorf("plan.json: %v", err)
	}
	noDirTemps(t, s)
}

func TestDebateIsReplaced(t *testing.T) { eachStore(t, testDebateIsReplaced) }

func testDebateIsReplaced(t *testing.T, s *Store) {
	if _, err := s.Debate(tctx(t), "s", "d/1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Debate before PutDebate: err = %v, want fs.ErrNotExist", err)
	}
	d := research.Debate{A: "h1", B: "h2"}
	for i, speaker := range []string{"A", "B", "judge"} {
		d.Turns = append(d.Turns, research.DebateTurn{Turn: i + 1, Speaker: speaker, Argument: "arg " + speaker})
		if speaker == "judge" {
			d.Winner, d.Reasoning = "h2", "B is testable"
		}
		if err := s.PutDebate(tctx(t), "s", "d/1", d); err != nil {
			t.Fatal(err)
		}
		got, err := s.Debate(tctx(t), "s", "d/1")
		if err != nil || !reflect.DeepEqual(got, d) {
			t.Fatalf("after turn %d: Debate = %+v, %v; want %+v", i+1, got, err, d)
		}
	}
	if _, err := s.Backend().Get(tctx(t), "s", "debates/d%2F1.json"); err != nil {
		t.Errorf("debate file: %v", err)
	}
	if err := s.PutDebate(tctx(t), "s", "", d); err == nil {
		t.Error("PutDebate with an empty id succeeded, want an error")
	}
	noDirTemps(t, s)
}

func TestMetaReviewRoundTrip(t *testing.T) { eachStore(t, testMetaReviewRoundTrip) }

func testMetaReviewRoundTrip(t *testing.T, s *Store) {
	for _, round := range []int{1, 2, 12} {
		m := research.MetaReview{Round: round, Critiques: []string{fmt.Sprint("critique of ", round)}, Strengths: []string{"s"}, Feedback: "f"}
		if err := s.PutMetaReview(tctx(t), "s", m); err != nil {
			t.Fatal(err)
		}
		// Written once: a second meta-review of the same round is ignored.
		if err := s.PutMetaReview(tctx(t), "s", research.MetaReview{Round: round, Feedback: "later"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, round := range []int{1, 2, 12} {
		got, err := s.MetaReview(tctx(t), "s", round)
		if err != nil || got.Round != round || got.Feedback != "f" || got.Critiques[0] != fmt.Sprint("critique of ", round) {
			t.Errorf("MetaReview(%d) = %+v, %v", round, got, err)
		}
	}
	if _, err := s.Backend().Get(tctx(t), "s", "metareviews/0012.json"); err != nil {
		t.Errorf("metareviews/0012.json: %v", err)
	}
	if _, err := s.MetaReview(tctx(t), "s", 3); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("MetaReview(absent) err = %v, want fs.ErrNotExist", err)
	}
	if err := s.PutMetaReview(tctx(t), "s", research.MetaReview{Round: -1}); err == nil {
		t.Error("PutMetaReview with a negative round succeeded, want an error")
	}
	noDirTemps(t, s)
}

func TestOverviewRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		if _, err := s.Overview(tctx(t), "s"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Overview before PutOverview: err = %v, want fs.ErrNotExist", err)
		}
		o := research.Overview{
			Summary:       "first",
			Themes:        []research.OverviewTheme{{Title: "tau", Hypotheses: []string{"h1", "h2"}, Note: "n"}},
			OpenQuestions: []string{"q"},
			Experiments:   []string{"e"},
		}
		if err := s.PutOverview(tctx(t), "s", o); err != nil {
			t.Fatal(err)
		}
		if err := s.PutOverview(tctx(t), "s", research.Overview{Summary: "second"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Overview(tctx(t), "s")
		if err != nil || !reflect.DeepEqual(got, o) {
			t.Errorf("Overview = %+v, %v; want the first %+v", got, err, o)
		}
	})
}

func TestPutReport(t *testing.T) { eachPlainStore(t, testPutReport) }

func testPutReport(t *testing.T, s *Store) {
	for _, md := range []string{"# draft\n", "# final\n"} {
		path, err := s.PutReport(tctx(t), "s/1", []byte(md))
		if err != nil {
			t.Fatal(err)
		}
		if path != s.Where("s/1", "report.md") {
			t.Errorf("PutReport path = %q, want %q", path, s.Where("s/1", "report.md"))
		}
		if d, ok := s.Backend().(*Dir); ok {
			if b, _ := os.ReadFile(path); !filepath.IsAbs(path) || path != filepath.Join(d.SessionDir("s/1"), "report.md") || string(b) != md {
				t.Errorf("report.md at %q = %q, want %q", path, b, md)
			}
		}
		if b, err := s.Report(tctx(t), "s/1"); err != nil || string(b) != md {
			t.Errorf("Report = %q, %v; want %q (the later report replaces the earlier)", b, err, md)
		}
	}
	noDirTemps(t, s)
}

func TestPutFile(t *testing.T) { eachStore(t, testPutFile) }

func testPutFile(t *testing.T, s *Store) {
	for _, body := range []string{`{"v":1}`, `{"v":2}`} {
		path, err := s.PutFile(tctx(t), "s/1", "report.json", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if path != s.Where("s/1", "report.json") {
			t.Errorf("PutFile path = %q", path)
		}
		if b, err := s.File(tctx(t), "s/1", "report.json"); err != nil || string(b) != body {
			t.Errorf("report.json = %q, %v; want %q (overwritten)", b, err, body)
		}
	}
	if _, err := s.PutFile(tctx(t), "s/1", "elo.svg", []byte("<svg/>")); err != nil {
		t.Errorf("PutFile(elo.svg): %v", err)
	}
	// An empty artefact (a bibliography of a session that cites nothing) is a file like any
	// other, whether its bytes are nil or empty.
	for _, empty := range [][]byte{nil, {}} {
		if _, err := s.PutFile(tctx(t), "s/1", "bibliography.bib", empty); err != nil {
			t.Errorf("PutFile(empty %#v): %v", empty, err)
		}
		if b, err := s.File(tctx(t), "s/1", "bibliography.bib"); err != nil || len(b) != 0 {
			t.Errorf("bibliography.bib = %q, %v; want empty, nil", b, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x.json", "a/b.json", `a\b.json`, ".hidden", ".tmp-123", "plan.json", "hypotheses", "events.jsonl", "nul\x00.json", strings.Repeat("x", 300)} {
		if path, err := s.PutFile(tctx(t), "s/1", bad, []byte("x")); err == nil {
			t.Errorf("PutFile(%q) wrote %s, want an error", bad, path)
		}
	}
	if d, ok := s.Backend().(*Dir); ok {
		if _, err := os.Stat(filepath.Join(d.Root(), "x.json")); err == nil {
			t.Error("PutFile escaped the session directory")
		}
	}
	noDirTemps(t, s)
}
