package tournament

import (
	"encoding/json"
	"testing"
)

// FuzzResult: a stored match result either reads back as a result that writes out as the
// same sentence, or is refused with an error that shows the form; it never panics.
func FuzzResult(f *testing.F) {
	for _, s := range []string{`"h-0001 beat h-0002"`, `"h-0003 lost to h-0001 in a debate"`, `"h-1 beat "`, `" lost to h-2"`, `""`, `7`, `"h-1 beat h-2 beat h-3"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r Result
		if err := json.Unmarshal(raw, &r); err != nil {
			return
		}
		if r.A == "" || r.B == "" {
			t.Fatalf("%s read as %+v, with a side missing", raw, r)
		}
		if data, back, err := roundTrip(r); err != nil || back != r {
			t.Fatalf("%s read as %+v, wrote %s, read back as %+v (%v)", raw, r, data, back, err)
		}
	})
}

// roundTrip writes a result as JSON and reads it back.
func roundTrip(r Result) (data []byte, back Result, err error) {
	if data, err = json.Marshal(r); err != nil {
		return data, back, err
	}
	err = json.Unmarshal(data, &back)
	return data, back, err
}
