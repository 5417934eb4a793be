package activities

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestShowArguments: an approval shows a call's whole arguments, indented, cut at
// MaxShownArguments bytes (at a character's boundary) with the cut named.
func TestShowArguments(t *testing.T) {
	long := `{"qq":"` + strings.Repeat("é", 3000) + `"}` // indented, 6,014 bytes; byte 4,096 is inside an "é"
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"object", `{"query":"tau","limit":5}`, "{\n  \"query\": \"tau\",\n  \"limit\": 5\n}"},
		{"none", ``, "{}"},
		{"null", `null`, "{}"},
		{"not JSON", `query=tau`, "query=tau"},
		{"escapes kept", `{"q":"a\u0007b\n<c>"}`, "{\n  \"q\": \"a\\u0007b\\n<c>\"\n}"},
		{"long", long, "{\n  \"qq\": \"" + strings.Repeat("é", 2042) + "\n[cut: 4095 of 6014 bytes shown]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ShowArguments(json.RawMessage(tc.raw))
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
