package session

import (
	"strings"
	"testing"
)

// TestCommandBy: every command takes who sent it; the identity is cleaned and bounded, never refused.
func TestCommandBy(t *testing.T) {
	long := strings.Repeat("é", MaxByLength+10)
	for _, tt := range []struct {
		name, payload, want, wantErr string
	}{
		{"suspend", `{"by": "ada"}`, "ada", ""},
		{"resume", `{"by": "  grace@lab.org  "}`, "grace@lab.org", ""},
		{"feedback", `{"toward": "x", "by": "ev\u001b[31mil\n"}`, "ev[31mil", ""},
		{"checkpoint", `{"by": "a\u202eb\u0000c"}`, "abc", ""},
		{"terminate", `{"by": "` + long + `"}`, strings.Repeat("é", MaxByLength), ""},
		{"resume", `{"by": 3}`, "", `"by" must be a string`},
		{"set-budget", `{"max_hypotheses": 50, "by": "ada"}`, "ada", ""},
		{"set-budget", `{"max_hypotheses": 0}`, "", "max_hypotheses is 0; it must be from 1"},
		{"set-budget", `{}`, "", `"max_hypotheses" or several`},
	} {
		t.Run(tt.name+" "+tt.payload, func(t *testing.T) {
			cmd, err := ParseCommand(tt.name, []byte(tt.payload))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseCommand = %v; want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || cmd.By != tt.want {
				t.Fatalf("ParseCommand: by %q, %v; want %q", cmd.By, err, tt.want)
			}
		})
	}
}

// TestLocalName: $USER names the local user, then $USERNAME, then the account the process
// runs as, so a desk or starter started by a service or a CI job still names somebody.
func TestLocalName(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" for the account's name
	}{
		{"USER", map[string]string{"USER": "ada", "USERNAME": "bob"}, "ada"},
		{"USERNAME", map[string]string{"USERNAME": "bob"}, "bob"},
		{"neither", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := LocalName(func(k string) string { return tc.env[k] })
			if want := tc.want; want != "" && got != want || want == "" && got == "" {
				t.Errorf("LocalName = %q, want %q (or the account's name when empty)", got, want)
			}
		})
	}
}
