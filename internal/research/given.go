package research

// A value the scientist typed always wins, even a zero. Config's fields are `omitempty`
// and a zero reads as "not given", which is right for a new session (it takes the
// default) but wrong for a continued or forked one: there a zero must be able to clear
// what the parent set ("token_budget": 0 is "no cap", "time_limit": "0s" "no limit",
// "debate_share": 0 "no debates"). So a Config remembers which of its fields were given
// as zero: from JSON, a key that is present (and not null); from the starter, a flag the
// scientist typed (Give). It writes them back to JSON, so they survive the trip to the
// workflow, and Over puts them over the parent's values. A request without such keys
// means what it meant before.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// fieldSet is a set of Config's fields, by their position in configFields.
type fieldSet uint64

// configFields are Config's fields by JSON name, in declaration order
// (TestEveryFieldTakesAGivenZero checks they fit a fieldSet).
var configFields = func() []configField {
	t := reflect.TypeFor[Config]()
	var fs []configField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		fs = append(fs, configField{name: name, index: i})
	}
	return fs
}()

type configField struct {
	name  string // in JSON, as the workflow input and the temporal CLI write it
	index int    // in the struct
}

// ConfigFields names Config's fields as JSON writes them, in declaration order.
func ConfigFields() []string {
	names := make([]string, len(configFields))
	for i, f := range configFields {
		names[i] = f.name
	}
	return names
}

func fieldNamed(name string) (int, bool) {
	i := slices.IndexFunc(configFields, func(f configField) bool { return f.name == name })
	return i, i >= 0
}

// Give records that field (its JSON name) was given, so that a zero in it is a value and
// not "not given". The starter calls it for every configuration flag the scientist typed.
func (c *Config) Give(field string) error {
	i, ok := fieldNamed(field)
	if !ok {
		return fmt.Errorf("config has no field %q; it has %s", field, strings.Join(ConfigFields(), ", "))
	}
	c.zeros |= 1 << i
	return nil
}

// Given says whether field (its JSON name) was given: it holds a value other than zero,
// or a zero that was given.
func (c Config) Given(field string) bool {
	i, ok := fieldNamed(field)
	return ok && (c.zeros.has(field) || !isZero(c.value(i)))
}

// has says whether the set holds field; a name Config lacks is in no set.
func (z fieldSet) has(field string) bool {
	i, ok := fieldNamed(field)
	return ok && z&(1<<i) != 0
}

// Plain is c with its given zeros forgotten: every zero reads as "not given", as every
// Config did before zeros could be given (sessions started then merge this way).
func (c Config) Plain() Config {
	c.zeros = 0
	return c
}

func (c *Config) value(i int) reflect.Value {
	return reflect.ValueOf(c).Elem().Field(configFields[i].index)
}

// isZero says v reads as not given when no zero was: a zero (-0.0 too), or an empty list.
func isZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice:
		return v.Len() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	}
	return v.IsZero()
}

// Over returns base with every field c gives put over it: what a continued or forked
// session's request changes in the configuration it starts from. A field is given when it
// holds a value, or a zero that was given; lists are copied, not shared. (Field by field
// and without reflection: the workflow calls it, and its determinism checker reads
// reflection as a risk. TestEveryFieldTakesAGivenZero fails for a field left out here.)
func (c Config) Over(base Config) Config {
	z := c.zeros
	put(&base.MaxHypotheses, c.MaxHypotheses, z.has("max_hypotheses"))
	put(&base.TimeLimit, c.TimeLimit, z.has("time_limit"))
	put(&base.LabReminder, c.LabReminder, z.has("lab_reminder"))
	putList(&base.ReviewTypes, c.ReviewTypes, z.has("review_types"))
	put(&base.SafetyLevel, c.SafetyLevel, z.has("safety_level"))
	put(&base.Provider, c.Provider, z.has("provider"))
	put(&base.Model, c.Model, z.has("model"))
	put(&base.Seed, c.Seed, z.has("seed"))
	put(&base.TokenBudget, c.TokenBudget, z.has("token_budget"))
	put(&base.BudgetUSD, c.BudgetUSD, z.has("budget_usd"))
	put(&base.Batch, c.Batch, z.has("batch"))
	put(&base.ConvergenceRounds, c.ConvergenceRounds, z.has("convergence_rounds"))
	put(&base.CheckpointInterval, c.CheckpointInterval, z.has("checkpoint_interval"))
	put(&base.TopK, c.TopK, z.has("top_k"))
	put(&base.DebateShare, c.DebateShare, z.has("debate_share"))
	putList(&base.Tools, c.Tools, z.has("tools"))
	put(&base.ToolCallsPerTurn, c.ToolCallsPerTurn, z.has("tool_calls_per_turn"))
	put(&base.ToolCallsPerSession, c.ToolCallsPerSession, z.has("tool_calls_per_session"))
	putList(&base.ApproveTools, c.ApproveTools, z.has("approve_tools"))
	put(&base.ApprovalTimeout, c.ApprovalTimeout, z.has("approval_timeout"))
	put(&base.EmbeddingModel, c.EmbeddingModel, z.has("embedding_model"))
	put(&base.EmbeddingProvider, c.EmbeddingProvider, z.has("embedding_provider"))
	base.zeros |= z
	return base
}

// put sets *dst to v when v is given: a value other than zero, or a zero that was given.
func put[T comparable](dst *T, v T, given bool) {
	var zero T
	if v != zero || given {
		*dst = v
	}
}

// putList is put for a list, which it copies: a list is given when it is not empty, or
// when an empty one was given.
func putList(dst *[]string, v []string, given bool) {
	if len(v) > 0 || given {
		*dst = cloneList(v)
	}
}

// cloneList copies a list; an empty one given is none.
func cloneList(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return slices.Clone(l)
}

// plainConfig is Config's JSON encoding without the given zeros: a type without methods.
type plainConfig Config

// MarshalJSON writes c as always, and adds each zero that was given, which omitempty
// would leave out: 0, 0.0, "0s", "" or [].
func (c Config) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(plainConfig(c))
	if err != nil || c.zeros == 0 {
		return b, err
	}
	var extra bytes.Buffer
	for i, f := range configFields {
		v := c.value(i)
		if c.zeros&(1<<i) == 0 || !isZero(v) {
			continue // not given, or written above
		}
		zero := reflect.Zero(v.Type()).Interface()
		if v.Kind() == reflect.Slice {
			zero = reflect.MakeSlice(v.Type(), 0, 0).Interface() // [], not null
		}
		val, err := json.Marshal(zero)
		if err != nil {
			return nil, err
		}
		key, _ := json.Marshal(f.name)
		extra.WriteByte(',')
		extra.Write(key)
		extra.WriteByte(':')
		extra.Write(val)
	}
	out := bytes.TrimSuffix(b, []byte("}"))
	if len(out) == 1 { // "{": no field before the first added one
		return append(append(out, extra.Bytes()[1:]...), '}'), nil
	}
	return append(append(out, extra.Bytes()...), '}'), nil
}

// UnmarshalJSON reads c as always, and records which fields the JSON gives as zero: a key
// present with 0, "0s", "" or [] (null is not a value).
func (c *Config) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil // as encoding/json leaves a struct for null
	}
	var plain plainConfig
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	keys, err := presentKeys(b)
	if err != nil {
		return err
	}
	*c = Config(plain)
	c.zeros = 0
	for _, k := range keys {
		// encoding/json matches keys without regard to case; so does this.
		i := slices.IndexFunc(configFields, func(f configField) bool { return strings.EqualFold(f.name, k) })
		if i < 0 || !isZero(c.value(i)) {
			continue // not a field, or a value that speaks for itself
		}
		c.zeros |= 1 << i
		if v := c.value(i); v.Kind() == reflect.Slice {
			v.Set(reflect.Zero(v.Type())) // [] and an absent list read alike: none
		}
	}
	return nil
}

// presentKeys lists the keys of a JSON object whose values are not null, in order.
func presentKeys(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k, ok := t.(string); ok && string(v) != "null" {
			keys = append(keys, k)
		}
	}
	return keys, nil
}
