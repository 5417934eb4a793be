package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/keyring"
)

func keys(t *testing.T, ids ...string) *keyring.Keyring {
	t.Helper()
	var lines []string
	for _, id := range ids {
		l, err := keyring.New(id)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	k, err := keyring.Parse("test keys", strings.Join(lines, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const goal = "Find why some bacteria tolerate antibiotics without resistance genes"

// TestRoundTrip: a payload sealed by one process opens in another with the same keys, and
// nothing of it is readable on the way.
func TestRoundTrip(t *testing.T) {
	k := keys(t, "k1")
	dc := DataConverter(k)
	p, err := dc.ToPayload(map[string]string{"research_goal": goal})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(p.Data, []byte("bacteria")) || string(p.Metadata["encoding"]) != Encoding || string(p.Metadata[MetadataKeyID]) != "k1" {
		t.Fatalf("encoded payload %v", p)
	}
	var back map[string]string
	if err := DataConverter(k).FromPayload(p, &back); err != nil || back["research_goal"] != goal {
		t.Errorf("decoded %v, %v", back, err)
	}
}

// TestWrongOrMissingKey: a payload sealed with a key the process lacks, or met by a
// process with no keys, is an error that says what to do; a plain payload (a session
// from before encryption) still decodes.
func TestWrongOrMissingKey(t *testing.T) {
	p, err := DataConverter(keys(t, "lab-2026")).ToPayload(goal)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := DataConverter(keys(t, "other")).FromPayload(p, &s); err == nil || !strings.Contains(err.Error(), "key lab-2026") {
		t.Errorf("another key: %v", err)
	}
	if err := DataConverter(nil).FromPayload(p, &s); !errors.Is(err, ErrNoKeys) {
		t.Errorf("no keys: %v; want ErrNoKeys", err)
	}
	plain, _ := converter.GetDefaultDataConverter().ToPayload(goal)
	if err := DataConverter(keys(t, "k")).FromPayload(plain, &s); err != nil || s != goal {
		t.Errorf("a plain payload: %q, %v", s, err)
	}
}

// TestFailuresAreEncrypted: an error quoting the goal leaves the client with its message
// and stack trace sealed.
func TestFailuresAreEncrypted(t *testing.T) {
	var o client.Options
	ClientOptions(keys(t, "k"))(&o)
	f := o.FailureConverter.ErrorToFailure(temporal.NewApplicationError("the plan for \""+goal+"\" failed", "PlanFailed"))
	if strings.Contains(f.String(), "bacteria") {
		t.Fatalf("the failure carries the goal in the clear: %v", f)
	}
	if err := o.FailureConverter.FailureToError(f); !strings.Contains(err.Error(), "bacteria") {
		t.Errorf("decoded failure %v; want the message back", err)
	}
}

// TestServer: /decode opens what the worker sealed for the Web UI's origin and the CLI;
// CORS answers the UI's origin and refuses any other; without the bearer token nothing is
// decoded.
func TestServer(t *testing.T) {
	k := keys(t, "k")
	srv := httptest.NewServer(Handler(k, ServerOptions{Origins: []string{"http://localhost:8233"}, Token: "s3cret"}))
	defer srv.Close()
	sealed, err := DataConverter(k).ToPayload(goal)
	if err != nil {
		t.Fatal(err)
	}

	remote := func(token string) converter.DataConverter {
		return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{
			Endpoint: srv.URL,
			ModifyRequest: func(r *http.Request) error {
				r.Header.Set("Authorization", "Bearer "+token)
				return nil
			},
		}))
	}
	var s string
	if err := remote("s3cret").FromPayload(sealed, &s); err != nil || s != goal {
		t.Errorf("decode through the server: %q, %v", s, err)
	}
	if err := remote("guess").FromPayload(sealed, &s); err == nil {
		t.Error("a wrong token decoded")
	}

	for _, tc := range []struct {
		origin string
		status int
		allow  string
	}{{"http://localhost:8233", http.StatusNoContent, "http://localhost:8233"}, {"http://evil.example", http.StatusForbidden, ""}} {
		req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
		req.Header.Set("Origin", tc.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.allow || resp.StatusCode != tc.status {
			t.Errorf("preflight from %s: %s, Allow-Origin %q; want %d and %q", tc.origin, resp.Status, got, tc.status, tc.allow)
		}
		if tc.allow != "" && !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-Namespace") {
			t.Errorf("preflight allows headers %q; the Web UI sends X-Namespace", resp.Header.Get("Access-Control-Allow-Headers"))
		}
	}
}

// plainEncoding is json/plain in base64: a decoded payload's encoding, as /decode gives it.
const plainEncoding = "anNvbi9wbGFpbg=="

// TestServerRefuses: the codec server decodes nothing for a page that reached it by DNS
// rebinding (its own host name made to resolve to 127.0.0.1), for a page of another
// origin, for a caller without the token when one is set, or for a body over MaxBody; on
// loopback without a token it decodes for the local Web UI and CLI; its server has
// bounded headers and timeouts.
func TestServerRefuses(t *testing.T) {
	k := keys(t, "k")
	sealed, err := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), Codec{Keys: k}).ToPayloads(goal)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	if err := json.NewEncoder(&body).Encode(sealed); err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123"
	loopback := Handler(k, ServerOptions{Origins: []string{"http://localhost:8233"}})
	withToken := Handler(k, ServerOptions{Origins: []string{"http://localhost:8233"}, Token: token, Hosts: []string{"codec.lab.example"}})
	for _, tc := range []struct {
		name    string
		h       http.Handler
		host    string
		headers map[string]string
		body    string
		want    int
	}{
		{"the CLI on loopback", loopback, "127.0.0.1:8089", nil, body.String(), http.StatusOK},
		{"the Web UI on loopback", loopback, "localhost:8089", map[string]string{"Origin": "http://localhost:8233"}, body.String(), http.StatusOK},
		{"DNS rebinding", loopback, "attacker.example:8089", map[string]string{"Origin": "http://attacker.example:8089"}, body.String(), http.StatusForbidden},
		{"rebound, no Origin", loopback, "attacker.example:8089", nil, body.String(), http.StatusForbidden},
		{"another origin", loopback, "127.0.0.1:8089", map[string]string{"Origin": "http://attacker.example"}, body.String(), http.StatusForbidden},
		{"body over the bound", loopback, "127.0.0.1:8089", nil, `{"payloads":"` + strings.Repeat("A", MaxBody) + `"}`, http.StatusRequestEntityTooLarge},
		{"behind a proxy, with the token", withToken, "codec.lab.example", map[string]string{"Authorization": "Bearer " + token}, body.String(), http.StatusOK},
		{"behind a proxy, without it", withToken, "codec.lab.example", nil, body.String(), http.StatusUnauthorized},
		{"behind a proxy, a wrong one", withToken, "codec.lab.example", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", len(token))}, body.String(), http.StatusUnauthorized},
		{"not the proxy's name", withToken, "127.0.0.1:8089", map[string]string{"Authorization": "Bearer " + token}, body.String(), http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodPost, "/decode", strings.NewReader(tc.body))
		r.Host = tc.host
		r.Header.Set("Content-Type", "application/json")
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		tc.h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: %d %.200s; want %d", tc.name, w.Code, w.Body.String(), tc.want)
		}
		if decoded := strings.Contains(w.Body.String(), plainEncoding); decoded != (tc.want == http.StatusOK) {
			t.Errorf("%s: decoded %v: %.200s", tc.name, decoded, w.Body.String())
		}
	}
	s := Server(k, ServerOptions{})
	if s.MaxHeaderBytes <= 0 || s.MaxHeaderBytes > 1<<16 || s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Errorf("the codec server's limits: headers %d, read header %s, read %s, write %s, idle %s", s.MaxHeaderBytes, s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
}
