package access

import (
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	ada := Identity{ID: "ada@lab", Roles: []Role{Scientist}}
	bob := Identity{ID: "bob@lab", Roles: []Role{Scientist}}
	cat := Identity{ID: "cat@lab", Roles: []Role{Scientist}}
	root := Identity{ID: "root@lab", Roles: []Role{Admin}}
	nobody := Identity{ID: "eve@lab"}
	anon := Identity{ID: "anonymous", Roles: []Role{Scientist}}
	rec := Record{SessionID: "s-1", Owner: "ada@lab", Grants: []Grant{
		{Who: "bob@lab", Level: Read, By: "ada@lab"},
		{Who: "cat@lab", Level: Steer, By: "ada@lab"},
	}}
	unowned := Record{SessionID: "s-2"}
	tests := []struct {
		name    string
		who     Identity
		rec     Record
		act     Action
		allowed bool
		missing string // a part of the refusal
	}{
		{"owner reads", ada, rec, ActRead, true, ""},
		{"owner steers", ada, rec, ActSteer, true, ""},
		{"owner shares", ada, rec, ActShare, true, ""},
		{"reader reads", bob, rec, ActRead, true, ""},
		{"reader cannot steer", bob, rec, ActSteer, false, "may read it only"},
		{"reader cannot share", bob, rec, ActShare, false, "only ada@lab or an admin"},
		{"steerer reads", cat, rec, ActRead, true, ""},
		{"steerer steers", cat, rec, ActSteer, true, ""},
		{"steerer cannot share", cat, rec, ActShare, false, "ownership"},
		{"stranger cannot read", bob, Record{SessionID: "s-3", Owner: "ada@lab"}, ActRead, false, "not shared with bob@lab"},
		{"stranger cannot steer", bob, Record{SessionID: "s-3", Owner: "ada@lab"}, ActSteer, false, "steer access"},
		{"admin reads anything", root, unowned, ActRead, true, ""},
		{"admin steers anything", root, rec, ActSteer, true, ""},
		{"admin shares anything", root, rec, ActShare, true, ""},
		{"scientist starts", bob, Record{}, ActStart, true, ""},
		{"no role, no start", nobody, Record{}, ActStart, false, "the scientist role"},
		{"no role, no read even if granted", nobody, Record{SessionID: "s", Owner: "x", Grants: []Grant{{Who: "eve@lab", Level: Steer}}}, ActRead, false, "scientist role"},
		{"nobody signed in", Identity{}, rec, ActRead, false, "signed-in identity"},
		{"unowned session is nobody's", ada, unowned, ActRead, false, "no one"},
		// A session started without a scientist is "anonymous"'s in Temporal: nobody who
		// signs in by that name owns it; an admin shares it.
		{"anonymous owns nothing", anon, Record{SessionID: "s-4", Owner: "anonymous"}, ActRead, false, "no one"},
		{"nor steers it", anon, Record{SessionID: "s-4", Owner: "anonymous"}, ActSteer, false, "steer access"},
		{"nor shares it", anon, Record{SessionID: "s-4", Owner: "anonymous"}, ActShare, false, "an admin"},
		{"an admin shares it", root, Record{SessionID: "s-4", Owner: "anonymous"}, ActShare, true, ""},
		{"a grant on it holds", anon, Record{SessionID: "s-4", Owner: "anonymous", Grants: []Grant{{Who: "anonymous", Level: Read}}}, ActRead, true, ""},
		{"unknown action", ada, Record{SessionID: "s", Owner: "bob@lab"}, Action("delete"), false, "known action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.who, tt.rec, tt.act)
			if d.Allowed != tt.allowed {
				t.Fatalf("Decide(%s, %s) allowed = %v, want %v (%s)", tt.who.ID, tt.act, d.Allowed, tt.allowed, d.Missing)
			}
			if !tt.allowed && !strings.Contains(d.Missing, tt.missing) {
				t.Errorf("missing = %q, want it to say %q", d.Missing, tt.missing)
			}
			if tt.allowed && d.Missing != "" {
				t.Errorf("allowed with a refusal %q", d.Missing)
			}
		})
	}
}

func TestShare(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	base := Record{SessionID: "s-1", Owner: "ada@lab", Grants: []Grant{{Who: "bob@lab", Level: Read, By: "ada@lab"}}}
	tests := []struct {
		name   string
		who    string
		level  Level
		grants []string // who:level after
		err    string
	}{
		{"grant a new reader", "cat@lab", Read, []string{"bob@lab:read", "cat@lab:read"}, ""},
		{"raise to steer replaces", "bob@lab", Steer, []string{"bob@lab:steer"}, ""},
		{"revoke", "bob@lab", "", nil, ""},
		{"owner needs none", "ada@lab", Read, nil, "needs no grant"},
		{"empty identity", "  ", Read, nil, "with whom"},
		{"two lines", "a\nb", Read, nil, "one line"},
		{"bad level", "cat@lab", Level("own"), nil, "not one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Share(base, tt.who, tt.level, "root@lab", at)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var have []string
			for _, g := range got.Grants {
				have = append(have, g.Who+":"+string(g.Level))
				if g.Who == tt.who && (g.By != "root@lab" || g.At != "2026-11-27T09:00:00Z") {
					t.Errorf("grant %+v does not say who shared it when", g)
				}
			}
			if strings.Join(have, ",") != strings.Join(tt.grants, ",") {
				t.Errorf("grants = %v, want %v", have, tt.grants)
			}
			if len(base.Grants) != 1 || base.Grants[0].Level != Read {
				t.Errorf("Share changed its input: %+v", base.Grants)
			}
		})
	}
}

func TestPolicyRoles(t *testing.T) {
	p, err := ParsePolicy([]byte("admins: [root@lab]\nscientists: [ada@lab]\ngroups:\n  admin: [ops]\n  scientist: [lab]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id     string
		groups []string
		want   string
	}{
		{"root@lab", nil, "admin"},
		{"ada@lab", nil, "scientist"},
		{"bob@lab", []string{"lab"}, "scientist"},
		{"cat@lab", []string{"ops", "lab"}, "admin,scientist"},
		{"eve@lab", []string{"other"}, ""},
	}
	for _, tt := range tests {
		var got []string
		for _, r := range p.Roles(tt.id, tt.groups) {
			got = append(got, string(r))
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("Roles(%s, %v) = %v, want %s", tt.id, tt.groups, got, tt.want)
		}
	}
	if _, err := ParsePolicy([]byte("admin: [x]\n")); err == nil {
		t.Error("a misspelt key was accepted")
	}
	all, _ := ParsePolicy([]byte("scientists: ['*']\n"))
	if r := all.Roles("anyone@lab", nil); len(r) != 1 || r[0] != Scientist {
		t.Errorf(`"*" gave %v`, r)
	}
}
