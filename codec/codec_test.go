package codec

import (
	"bytes"
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
// CORS answers the UI's origin only; without the bearer token nothing is decoded.
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
		allow  string
	}{{"http://localhost:8233", "http://localhost:8233"}, {"http://evil.example", ""}} {
		req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
		req.Header.Set("Origin", tc.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.allow || resp.StatusCode != http.StatusNoContent {
			t.Errorf("preflight from %s: %s, Allow-Origin %q; want 204 and %q", tc.origin, resp.Status, got, tc.allow)
		}
		if tc.allow != "" && !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-Namespace") {
			t.Errorf("preflight allows headers %q; the Web UI sends X-Namespace", resp.Header.Get("Access-Control-Allow-Headers"))
		}
	}
}
