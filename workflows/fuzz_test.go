package workflows

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// FuzzCarried: the state one run hands the next when it continues as new either decodes
// into state that encodes and decodes again to the same bytes, or is refused; it never
// panics.
func FuzzCarried(f *testing.F) {
	c := Carried{
		Goal: "Find druggable mechanisms", Plan: "Seek mechanisms.", Life: session.New(),
		StartedAt: time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC),
		Entries: entryList{
			{ID: "h-0001", Title: "Microglia carry tau", Origin: "generation", Strategy: "literature", Round: 1, Elo: 1250.5, EloSE: 80.25, Wins: 2, Losses: 1, Reviews: 1, Score: 7},
			{ID: "h-0002", Title: "Exosomes", Origin: "evolution", Strategy: "combination", Parents: []string{"h-0001"}, Round: 2, Cluster: 1, Excluded: "unsafe", Elo: 1200},
		},
		Played:  pairSet{"h-0001|h-0002": true},
		Results: []tournament.Result{{A: "h-0001", B: "h-0002", AWon: true}, {A: "h-0002", B: "h-0001", Debate: true}},
		Rating:  session.RatingFitted, Boundary: 41.5, Scheduled: 3, NextID: 2,
		Events: []session.Event{{Seq: 1, Kind: session.EventNote, Detail: "research plan: Seek mechanisms."}},
	}
	good, err := json.Marshal(c)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	for _, s := range []string{"{}", "null", `{"entries":[[1]]}`, `{"entries":[["h-1","t","o","s",[],1,0,"",1200,0,0,0,0,"x"]]}`, `{"results":["h-1 beat"]}`, `{"played":{"a|b":true}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var c Carried
		if err := json.Unmarshal(raw, &c); err != nil {
			return
		}
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", raw, err)
		}
		var back Carried
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("state %s does not decode again: %v", data, err)
		}
		again, err := json.Marshal(back)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("state %s decoded and encoded again as %s (%v)", data, again, err)
		}
	})
}
