package testcheck

import (
	"errors"
	"testing"
)

// TestErr: every pairing of wanted and given errors, for both ways of matching.
func TestErr(t *testing.T) {
	refused := errors.New("limit 51 is out of range")
	for _, tt := range []struct {
		name   string
		check  func(testing.TB, error, string) bool
		err    error
		want   string
		done   bool
		failed bool
	}{
		{"none wanted, none given", Err, nil, "", false, false},
		{"none wanted, one given", Err, refused, "", true, true},
		{"one wanted, none given", Err, nil, "out of range", true, true},
		{"one wanted, it given", Err, refused, "out of range", true, false},
		{"one wanted, another given", Err, refused, "too large", true, true},
		{"prefix wanted, it given", ErrPrefix, refused, "limit 51", true, false},
		{"prefix wanted, a middle given", ErrPrefix, refused, "out of range", true, true},
		{"prefix wanted, none given", ErrPrefix, nil, "limit", true, true},
		{"no prefix wanted, one given", ErrPrefix, refused, "", true, true},
	} {
		r := NewRecorder(t)
		if done := tt.check(r, tt.err, tt.want); done != tt.done || (len(r.Failures) > 0) != tt.failed {
			t.Errorf("%s: done %v, failures %q; want done %v, failed %v", tt.name, done, r.Failures, tt.done, tt.failed)
		}
	}
}
