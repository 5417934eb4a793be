package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// A Result may hold ±Inf (an odds ratio with a zero cell, the t of a perfect fit), which
// encoding/json refuses to write, and Temporal's payloads and the session store are JSON.
// So the fields that can be infinite are written as the strings "Inf" and "-Inf", as R's
// own JSON writers do, and read back. NaN is never written: check refuses it earlier.

// jnum is a float64 in JSON that may be "Inf" or "-Inf".
type jnum float64

func (n jnum) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return nil, fmt.Errorf("stats: NaN has no place in a result")
	case math.IsInf(f, 1):
		return []byte(`"Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func (n *jnum) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"Inf"`:
		*n = jnum(math.Inf(1))
		return nil
	case `"-Inf"`:
		*n = jnum(math.Inf(-1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("stats: %s is not a number, \"Inf\" or \"-Inf\"", b)
	}
	*n = jnum(f)
	return nil
}

// The shadowing fields below sit shallower than the embedded ones of the same JSON name,
// so encoding/json uses them in both directions.

func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Low   jnum    `json:"low"`
		High  jnum    `json:"high"`
		Level float64 `json:"level"`
	}{jnum(iv.Low), jnum(iv.High), iv.Level})
}

func (iv *Interval) UnmarshalJSON(b []byte) error {
	var w struct {
		Low   jnum    `json:"low"`
		High  jnum    `json:"high"`
		Level float64 `json:"level"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*iv = Interval{float64(w.Low), float64(w.High), w.Level}
	return nil
}

func (e Effect) MarshalJSON() ([]byte, error) {
	type plain Effect
	return json.Marshal(struct {
		plain
		Value jnum `json:"value"`
	}{plain(e), jnum(e.Value)})
}

func (e *Effect) UnmarshalJSON(b []byte) error {
	type plain Effect
	w := struct {
		*plain
		Value jnum `json:"value"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.Value = float64(w.Value)
	return nil
}

func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		plain
		Statistic jnum `json:"statistic"`
	}{plain(r), jnum(r.Statistic)})
}

func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	w := struct {
		*plain
		Statistic jnum `json:"statistic"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.Statistic = float64(w.Statistic)
	return nil
}
