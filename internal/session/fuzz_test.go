package session

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParseCommand: a command's payload, as a signal or an update brings it, either
// decodes into a command that passes its checks and decodes again to the same command, or
// is refused with an error naming the command; it never panics.
func FuzzParseCommand(f *testing.F) {
	for i, c := range Commands {
		f.Add(uint8(i), []byte(c.Example))
		f.Add(uint8(i), []byte(`{"reason": 7}`))
	}
	for _, s := range []string{"", "null", "[]", `{"toward": "microglia", "extra": 1}`, `{"score": 11}`, `{"token_budget": -5}`, `{"testable_predictions": "one"}`, "\xff"} {
		f.Add(uint8(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, payload []byte) {
		name := Commands[int(which)%len(Commands)].Name
		cmd, err := ParseCommand(name, payload)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%s %q: an empty error", name, payload)
			}
			return
		}
		if cmd.Name != name {
			t.Fatalf("%s %q parsed as a %q command", name, payload, cmd.Name)
		}
		data, err := json.Marshal(cmd)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(data, &fields); err != nil {
			t.Fatal(err)
		}
		delete(fields, "name") // the command's name is not one of its arguments
		again, _ := json.Marshal(fields)
		back, err := ParseCommand(name, again)
		if err != nil || !reflect.DeepEqual(back, cmd) {
			t.Fatalf("%s %q parsed as %+v; its own encoding %s parsed as %+v, %v", name, payload, cmd, again, back, err)
		}
	})
}
