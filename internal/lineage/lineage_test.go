package lineage

import (
	"regexp"
	"strings"
	"testing"
)

func TestForkID(t *testing.T) {
	id := ForkID("crispr-1", "1")
	if !regexp.MustCompile(`^crispr-1-fork-[0-9a-f]{8}$`).MatchString(id) {
		t.Errorf("ForkID = %q; want {parent}-fork-{8 hex}", id)
	}
	if again := ForkID("crispr-1", "1"); again != id {
		t.Errorf("ForkID is not deterministic: %q then %q", id, again)
	}
	seen := map[string]bool{}
	for _, c := range []struct{ parent, key string }{{"crispr-1", "1"}, {"crispr-1", "2"}, {"crispr-2", "1"}, {"crispr-1x", "1"}} {
		id := ForkID(c.parent, c.key)
		if seen[id] {
			t.Errorf("ForkID(%q, %q) = %q collides", c.parent, c.key, id)
		}
		seen[id] = true
	}
}

func TestNextID(t *testing.T) {
	for _, c := range []struct {
		conv string
		seq  int
		want string
	}{{"tau", 1, "tau.2"}, {"tau", 2, "tau.3"}, {"tau-fork-0a1b2c3d", 1, "tau-fork-0a1b2c3d.2"}} {
		if got := NextID(c.conv, c.seq); got != c.want {
			t.Errorf("NextID(%q, %d) = %q; want %q", c.conv, c.seq, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := func(d Descriptor) Descriptor { return d.WithDefaults("s") }
	for _, c := range []struct {
		name string
		d    Descriptor
		want string // "" for valid; else a fragment of the error
	}{
		{"root user", ok(Descriptor{}), ""},
		{"continue", ok(Descriptor{Parent: "p", Relation: Continue, Conversation: "p", Seq: 2}), ""},
		{"fork", ok(Descriptor{Parent: "p", Relation: Fork, Checkpoint: 3}), ""},
		{"subagent", ok(Descriptor{Type: Subagent, Parent: "p", Relation: Spawn, Name: "verify h-0001"}), ""},
		{"cron", ok(Descriptor{Type: Cron, Schedule: "daily"}), ""},
		{"unknown type", ok(Descriptor{Type: "robot"}), "must be one of"},
		{"parent without relation", ok(Descriptor{Parent: "p"}), "must say how"},
		{"continue without parent", ok(Descriptor{Relation: Continue}), "needs the session it comes from"},
		{"unknown relation", ok(Descriptor{Parent: "p", Relation: "clone"}), "must be continue, fork or subagent"},
		{"subagent without name", ok(Descriptor{Type: Subagent, Parent: "p", Relation: Spawn}), "parent and a name"},
		{"spawned user", ok(Descriptor{Parent: "p", Relation: Spawn}), "spawned session is a subagent"},
		{"negative checkpoint", ok(Descriptor{Parent: "p", Relation: Fork, Checkpoint: -1}), "negative"},
		{"long intention", ok(Descriptor{Parent: "p", Relation: Fork, Intention: &Intention{NextSteps: strings.Repeat("x", MaxIntentionLength+1)}}), "intention"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.d.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Validate() = %v; want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Validate() = %v; want an error containing %q", err, c.want)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	d := Descriptor{}.WithDefaults("s-1")
	if d.Type != User || d.Conversation != "s-1" || d.Seq != 1 || !d.Foreground() {
		t.Errorf("defaults: %+v", d)
	}
	if (Descriptor{Type: Cron}).WithDefaults("x").Foreground() {
		t.Error("a cron session is not foreground")
	}
}
