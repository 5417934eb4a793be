package workflows

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/proximity"
)

func TestCompactListsRoundTrip(t *testing.T) {
	played := pairSet{activities.PairKey("h-0001", "h-0042"): true, activities.PairKey("h-0003", "scientist's own"): true}
	edges := edgeList{{A: "h-0007", B: "h-0001", Sim: 0.4321}, {A: "h-12345", B: "x", Sim: 0.1}}
	data, err := json.Marshal(struct {
		P pairSet  `json:"p"`
		E edgeList `json:"e"`
	}{played, edges})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "[1,42]") || !strings.Contains(string(data), "[7,1,0.4321]") {
		t.Errorf("not compact: %s", data)
	}
	var back struct {
		P pairSet  `json:"p"`
		E edgeList `json:"e"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.P, played) || !reflect.DeepEqual([]proximity.Edge(back.E), []proximity.Edge(edges)) {
		t.Errorf("round trip: %+v %+v; want %+v %+v", back.P, back.E, played, edges)
	}
	entries := entryList{
		{ID: "h-0003", Title: "Tau | spreads", Origin: "evolution", Strategy: "grounding", Parents: []string{"h-0001", "own"}, Round: 2, Cluster: 1, Elo: 1216.5, Wins: 1, Reviews: 2, Score: 7.5},
		{ID: "own", Title: "the scientist's", Origin: "scientist", Excluded: "near-duplicate of h-0003 (similarity 0.91)", Elo: 1200},
	}
	data, err = json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	var entriesBack entryList
	if err := json.Unmarshal(data, &entriesBack); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(entriesBack, entries) {
		t.Errorf("entries round trip:\n%+v\nwant\n%+v", entriesBack, entries)
	}
	for _, bad := range []string{`{"p": [[1, true]]}`, `{"e": [[1, 2, "x"]]}`, `{"p": {"a|b": true}}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s decoded without error", bad)
		}
	}
}
