package provider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Fake OpenAI and Anthropic servers that speak the APIs' real wire formats, for the real
// SDK clients to talk to. No test here touches the network beyond the loopback.

// testKey is the API key the tests use; no error may ever contain it.
const testKey = "sk-test-SECRET-0123456789abcdef"

// reply is one canned HTTP answer.
type reply struct {
	status int
	header map[string]string
	body   string
}

// recorded is one request a fake server received.
type recorded struct {
	method, path string
	header       http.Header
	raw          []byte
	body         map[string]any
}

// fake is an httptest server answering with canned replies, in order.
type fake struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	reqs    []recorded
}

func newFake(t *testing.T, replies ...reply) *fake {
	t.Helper()
	f := &fake{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		rec := recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), raw: raw}
		_ = json.Unmarshal(raw, &rec.body)
		f.mu.Lock()
		f.reqs = append(f.reqs, rec)
		var rep reply
		if len(f.replies) > 0 {
			rep, f.replies = f.replies[0], f.replies[1:]
		} else {
			rep = reply{status: 599, body: `{"error":{"message":"the fake server has no reply left","type":"test"}}`}
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// saw returns the requests the server received, failing the test unless there were n.
func (f *fake) saw(t *testing.T, n int) []recorded {
	t.Helper()
	reqs := f.requests()
	if len(reqs) != n {
		t.Fatalf("the server saw %d requests, want %d", len(reqs), n)
	}
	return reqs
}

// wire is one provider's wire format and client, so a test can run against both.
type wire struct {
	name   string
	keyVar string
	// client returns a Completer talking to the fake server at url.
	client func(url string) (Completer, error)
	// ok is a successful answer with the given text; truncated sets the stop reason of
	// an answer cut at the token limit.
	ok func(text string, promptTokens, completionTokens int, truncated bool) reply
	// fail is an error answer of the given status, error type/code and message.
	fail func(status int, kind, message string, header map[string]string) reply
	// path is where the SDK sends a completion.
	path string
	// sent returns the conversation a request carried, as role: text lines.
	sent func(rec recorded) []string
	// schema returns the schema name and the schema a request carried.
	schema func(rec recorded) (string, map[string]any)
}

var openaiWire = wire{
	name:   "openai",
	keyVar: "OPENAI_API_KEY",
	client: func(url string) (Completer, error) {
		c, err := NewOpenAI(OpenAIConfig{APIKey: testKey, BaseURL: url + "/v1", Model: "test-model"})
		return c, err
	},
	ok: func(text string, p, c int, truncated bool) reply {
		finish := "stop"
		if truncated {
			finish = "length"
		}
		content, _ := json.Marshal(text)
		return reply{status: 200, body: fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1730000000,"model":"test-model",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":%q}],`+
			`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d},"system_fingerprint":"fp_1"}`, content, finish, p, c, p+c)}
	},
	fail: func(status int, kind, message string, header map[string]string) reply {
		code := "null"
		if kind == "insufficient_quota" {
			code = `"insufficient_quota"`
		}
		msg, _ := json.Marshal(message)
		return reply{status: status, header: header, body: fmt.Sprintf(`{"error":{"message":%s,"type":%q,"param":null,"code":%s}}`, msg, kind, code)}
	},
	path: "/v1/chat/completions",
	sent: func(rec recorded) []string {
		var out []string
		msgs, _ := rec.body["messages"].([]any)
		for _, m := range msgs {
			m := m.(map[string]any)
			out = append(out, fmt.Sprintf("%s: %v", m["role"], m["content"]))
		}
		return out
	},
	schema: func(rec recorded) (string, map[string]any) {
		rf, _ := rec.body["response_format"].(map[string]any)
		js, _ := rf["json_schema"].(map[string]any)
		name, _ := js["name"].(string)
		s, _ := js["schema"].(map[string]any)
		return name, s
	},
}

var anthropicWire = wire{
	name:   "anthropic",
	keyVar: "ANTHROPIC_API_KEY",
	client: func(url string) (Completer, error) {
		c, err := NewAnthropic(AnthropicConfig{APIKey: testKey, BaseURL: url, Model: "test-model"})
		return c, err
	},
	ok: func(text string, p, c int, truncated bool) reply {
		stop := "tool_use"
		if truncated {
			stop = "max_tokens"
		}
		var block string
		if json.Valid([]byte(text)) && strings.HasPrefix(strings.TrimSpace(text), "{") {
			block = fmt.Sprintf(`{"type":"tool_use","id":"toolu_01","name":"%s","input":%s}`, "NAME", text)
		} else { // not an object: the model wrote text instead of calling the tool
			t, _ := json.Marshal(text)
			block = fmt.Sprintf(`{"type":"text","text":%s}`, t)
		}
		return reply{status: 200, body: fmt.Sprintf(`{"id":"msg_01","type":"message","role":"assistant","model":"test-model","content":[%s],`+
			`"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d}}`, block, stop, p, c)}
	},
	fail: func(status int, kind, message string, header map[string]string) reply {
		msg, _ := json.Marshal(message)
		return reply{status: status, header: header, body: fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%s},"request_id":"req_01"}`, kind, msg)}
	},
	path: "/v1/messages",
	sent: func(rec recorded) []string {
		var out []string
		if sys, ok := rec.body["system"].([]any); ok {
			for _, b := range sys {
				out = append(out, fmt.Sprintf("system: %v", b.(map[string]any)["text"]))
			}
		}
		msgs, _ := rec.body["messages"].([]any)
		for _, m := range msgs {
			m := m.(map[string]any)
			var texts []string
			for _, b := range m["content"].([]any) {
				texts = append(texts, fmt.Sprint(b.(map[string]any)["text"]))
			}
			out = append(out, fmt.Sprintf("%s: %s", m["role"], strings.Join(texts, "")))
		}
		return out
	},
	schema: func(rec recorded) (string, map[string]any) {
		tools, _ := rec.body["tools"].([]any)
		if len(tools) != 1 {
			return "", nil
		}
		tool := tools[0].(map[string]any)
		choice, _ := rec.body["tool_choice"].(map[string]any)
		if choice["type"] != "tool" || choice["name"] != tool["name"] {
			return "", nil // the tool is not forced
		}
		s, _ := tool["input_schema"].(map[string]any)
		return tool["name"].(string), s
	},
}

var wires = []wire{openaiWire, anthropicWire}

// completer is w's client for the fake server at url.
func (w wire) completer(t *testing.T, url string) Completer {
	t.Helper()
	c, err := w.client(url)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// okFor is w.ok, with the tool named as the request will name it.
func okFor(w wire, schemaName, text string, p, c int, truncated bool) reply {
	r := w.ok(text, p, c, truncated)
	r.body = strings.Replace(r.body, `"name":"NAME"`, `"name":"`+schemaName+`"`, 1)
	return r
}
