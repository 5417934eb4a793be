package providertest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
)

// Answers. The fake tells which agent asked from the answer's schema, never from the
// prompt's wording: on OpenAI the name of response_format.json_schema, on Anthropic the
// tool that tool_choice forces (or, when the model may choose, the offered tool named like
// an answer schema). A name it does not know is matched by the schema's top-level
// properties against internal/prompt's schemas, and a schema that matches none gets a
// minimal instance of itself. Each default answer parses with internal/prompt's parser
// for that agent.

// The agents the fake recognises.
const (
	AgentPlan             = "plan"
	AgentHypothesis       = "hypothesis" // generation and evolution share the schema
	AgentReview           = "review"
	AgentDeepVerification = "deep_verification"
	AgentComparison       = "comparison"
	AgentAdvocate         = "advocate"
	AgentJudgement        = "judgement"
	AgentMetaReview       = "meta_review"
	AgentOverview         = "overview"
)

// schemaNames are the answer schemas' names as cosci sends them (internal/provider's
// LLM), and a few spellings a rename might choose.
var schemaNames = map[string]string{
	"research_plan": AgentPlan, "plan": AgentPlan,
	"hypothesis": AgentHypothesis,
	"review":     AgentReview, "deep_verification": AgentDeepVerification,
	"comparison": AgentComparison,
	"advocate":   AgentAdvocate,
	"judgement":  AgentJudgement, "judgment": AgentJudgement,
	"meta_review": AgentMetaReview, "metareview": AgentMetaReview,
	"research_overview": AgentOverview, "overview": AgentOverview,
}

// schemaShapes maps the sorted top-level properties of each of internal/prompt's answer
// schemas (without the grounded "references") to its agent.
var schemaShapes = func() map[string]string {
	m := map[string]string{}
	for agent, s := range map[string]json.RawMessage{
		AgentPlan: prompt.PlanSchema, AgentHypothesis: prompt.HypothesisSchema, AgentReview: prompt.ReviewSchema,
		AgentDeepVerification: prompt.DeepVerificationSchema, AgentComparison: prompt.ComparisonSchema,
		AgentAdvocate: prompt.AdvocateSchema, AgentJudgement: prompt.JudgementSchema,
		AgentMetaReview: prompt.MetaReviewSchema, AgentOverview: prompt.OverviewSchema,
	} {
		m[shape(s)] = agent
	}
	m[shape(prompt.FullReviewSchema)] = AgentReview // a review that judges its citations' support
	return m
}()

// shape is a schema's top-level property names, sorted, without "references".
func shape(schema json.RawMessage) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	var keys []string
	for k := range s.Properties {
		if k != "references" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// hasProperty reports whether a schema has the top-level property name.
func hasProperty(schema json.RawMessage, name string) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	_, ok := s.Properties[name]
	return ok
}

// agentOf tells the agent from an answer schema's name, or failing that its shape; "" when
// neither is known.
func agentOf(name string, schema json.RawMessage) string {
	agent, ok := schemaNames[strings.ToLower(name)]
	if !ok {
		agent = schemaShapes[shape(schema)]
	}
	if agent == AgentReview && hasProperty(schema, "assumptions") {
		agent = AgentDeepVerification
	}
	return agent
}

// Turn is what the model was asked in one request (an ordinary one, or one of a batch),
// as the Answer hook sees it.
type Turn struct {
	Provider   string // "openai" or "anthropic"
	Model      string
	Agent      string // one of the Agent constants; "" when the request has no answer schema the fake knows
	SchemaName string // response_format.json_schema.name, or the answer tool's name
	Schema     json.RawMessage
	System     string
	Messages   []Message // the conversation, in order
	// Tools are the tools offered besides the answer, and MayCallTools whether the
	// request lets the model call one (tool_choice neither "none" nor forcing the answer).
	Tools        []Tool
	MayCallTools bool
	ToolResults  int // tool results already in the conversation
	// BatchID and CustomID name the batch and the request in it; both "" for an
	// ordinary request.
	BatchID, CustomID string
	Seq               int // how many turns the fake answered before this one
	// Key picks the default answer: a hash of what was asked (the system prompt, the
	// messages, the schema) and how many times the same was asked before, so that an
	// answer does not depend on the order in which concurrent requests arrive.
	Key          uint64
	PromptTokens int // input tokens, as the usage reports them in total
	// Default is what the fake answers when the hook does not change it.
	Default Reply
}

// Message is one message of a conversation: its role and its text (a tool call as its
// name and JSON arguments, a tool result as its content).
type Message struct {
	Role, Text string
}

// Tool is a tool a request offers the model.
type Tool struct {
	Name, Description string
	InputSchema       json.RawMessage
}

// Reply is the model's answer to a Turn.
type Reply struct {
	Text string // the answer: the JSON object of the schema, or prose when there is none
	// OutputTokens is what the usage reports as output (completion) tokens; 0 means the
	// tokens of Text (or of the calls) as the fake counts them.
	OutputTokens int
	// Calls, when not empty, are tool calls the model makes instead of answering; a
	// request that lets the model call no tool ignores them.
	Calls []ToolCall
}

// ToolCall is one call of a tool.
type ToolCall struct {
	Name      string
	Arguments json.RawMessage // a JSON object
}

// defaultReply is the fake's own answer to a turn: with callTools, a call of the first
// offered tool in a turn that may call one and has no tool result yet; otherwise a
// minimal valid answer of the agent's schema.
func defaultReply(t Turn, callTools bool) Reply {
	if callTools && t.MayCallTools && t.ToolResults == 0 && len(t.Tools) > 0 {
		tool := t.Tools[0]
		args, _ := json.Marshal(instance(tool.InputSchema, "fake "+strings.ReplaceAll(tool.Name, "__", ".")))
		return Reply{Calls: []ToolCall{{Name: tool.Name, Arguments: args}}}
	}
	if len(t.Schema) == 0 && t.Agent == "" {
		return Reply{Text: "OK."}
	}
	var v any
	if t.Agent != "" {
		v = answerFor(t.Agent, t.Key)
		if m, ok := v.(map[string]any); ok {
			for _, field := range []string{"references", "citation_support"} {
				if hasProperty(t.Schema, field) {
					m[field] = []any{} // a grounded turn's or a full review's schema wants the field, maybe empty
				}
			}
		}
	} else {
		v = instance(t.Schema, "x")
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("providertest: an answer that does not marshal: " + err.Error())
	}
	return Reply{Text: string(b)}
}

// vocabulary makes every fake hypothesis read differently, so that the proximity agent
// does not take them for near-duplicates.
var vocabulary = strings.Fields(`kinase phosphatase microglia astrocyte synapse exosome receptor ligand
	autophagy lysosome proteasome chaperone mitochondria ribosome endosome vesicle transporter channel
	cytokine chemokine interferon complement antibody epitope peptide enzyme cofactor metabolite lipid
	cholesterol sphingolipid glycan integrin cadherin collagen fibronectin laminin protease inhibitor
	agonist antagonist scaffold adaptor ubiquitin sumoylation acetylation methylation oxidation
	hypoxia glycolysis ketone insulin leptin ghrelin melatonin cortisol dopamine serotonin glutamate
	gaba glycine acetylcholine histamine purine pyrimidine nucleotide helicase polymerase ligase
	nuclease transposon enhancer promoter silencer insulator chromatin nucleosome histone centromere
	telomere spindle cilium flagellum lamellipodium filopodium podosome invadopodium microtubule
	actin myosin dynein kinesin tubulin septin spectrin ankyrin dystrophin titin nebulin vimentin`)

func phrase(rng *rand.Rand, n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = vocabulary[rng.IntN(len(vocabulary))]
	}
	return strings.Join(words, " ")
}

// answerFor is a minimal valid answer of an agent's schema; key makes it unique, and picks
// the winner of a match.
func answerFor(agent string, key uint64) any {
	rng := rand.New(rand.NewPCG(key, 0xc05c1))
	label := []string{"A", "B"}[key%2]
	seq := int(key % 1_000_000)
	switch agent {
	case AgentPlan:
		return map[string]any{
			"preferences":         []string{"mechanistic hypotheses", "close to the clinic", "testable in a year"},
			"constraints":         []string{"ethical research only", "existing models and methods", "no human subjects at first"},
			"evaluation_criteria": []string{"novelty", "plausibility", "testability"},
			"summary":             "Mechanistic, testable hypotheses judged on novelty, plausibility and testability.",
		}
	case AgentHypothesis:
		return map[string]any{
			"title":                fmt.Sprintf("Fake hypothesis %d: %s", seq, phrase(rng, 3)),
			"statement":            fmt.Sprintf("The %s pathway drives the effect through %s.", phrase(rng, 4), phrase(rng, 4)),
			"rationale":            "Reported links between " + phrase(rng, 6) + " suggest it.",
			"testable_predictions": []string{"Blocking " + phrase(rng, 3) + " reduces the effect.", "Raising " + phrase(rng, 3) + " increases it."},
		}
	case AgentReview, AgentDeepVerification:
		review := map[string]any{
			"scores":   map[string]float64{"novelty": float64(5 + seq%4), "plausibility": 7, "testability": 6.5, "safety": 9},
			"critique": "Clear mechanism; the weakest link is " + phrase(rng, 3) + ".",
			"verdict":  "accept",
		}
		if agent == AgentDeepVerification {
			review["assumptions"] = []map[string]string{{"text": "The pathway is active in the tissue.", "verdict": "holds", "note": "Widely reported."}}
		}
		return review
	case AgentComparison:
		return map[string]any{"winner": label, "reasoning": "It is more specific and easier to test."}
	case AgentAdvocate:
		return map[string]any{"argument": "My hypothesis makes the sharper prediction: " + phrase(rng, 5) + "."}
	case AgentJudgement:
		return map[string]any{"argument": "Both sides argued well.", "winner": label, "reasoning": "Its predictions are easier to test."}
	case AgentMetaReview:
		return map[string]any{
			"critiques":   []string{"Mechanisms are under-specified."},
			"strengths":   []string{"Predictions are concrete."},
			"feedback":    "Name the mediating molecule and a falsifying experiment.",
			"delegations": []any{},
		}
	case AgentOverview:
		return map[string]any{
			"summary":               "The session found several testable mechanisms.",
			"themes":                []any{},
			"open_questions":        []string{"Which mechanism dominates in vivo?"},
			"suggested_experiments": []string{"Knock down the top candidate in an animal model."},
		}
	}
	panic("providertest: no answer for agent " + agent)
}

// instance is a minimal value of a JSON schema: every property of an object, the fewest
// items an array allows, an enum's first value, a number's minimum; text for strings
// (within maxLength). It is the answer to a schema the fake does not know, and the
// arguments of a tool call.
func instance(schema json.RawMessage, text string) any {
	var s struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		Enum       []any                      `json:"enum"`
		Const      any                        `json:"const"`
		MinItems   int                        `json:"minItems"`
		MaxLength  *int                       `json:"maxLength"`
		Minimum    *float64                   `json:"minimum"`
		AnyOf      []json.RawMessage          `json:"anyOf"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return map[string]any{}
	}
	switch {
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case len(s.AnyOf) > 0:
		return instance(s.AnyOf[0], text)
	}
	typ, _ := s.Type.(string)
	if ts, ok := s.Type.([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	if typ == "" && s.Properties != nil {
		typ = "object"
	}
	switch typ {
	case "string":
		if s.MaxLength != nil && len(text) > *s.MaxLength {
			return text[:*s.MaxLength]
		}
		return text
	case "number", "integer":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	case "array":
		items := make([]any, s.MinItems)
		for i := range items {
			items[i] = instance(s.Items, text)
		}
		return items
	default:
		obj := map[string]any{}
		for name, p := range s.Properties {
			obj[name] = instance(p, text)
		}
		return obj
	}
}
