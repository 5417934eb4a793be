package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// TestConfigured: the worker names the providers it has a key for, never the keys.
func TestConfigured(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-test-SECRET", "ANTHROPIC_BASE_URL": "http://localhost:1"}
	got := configured(func(k string) string { return env[k] })
	if !slices.Equal(got, []string{"offline", "openai"}) {
		t.Errorf("configured = %v; want [offline openai]", got)
	}
	if strings.Contains(strings.Join(got, ","), "SECRET") {
		t.Error("the provider list carries a key")
	}
}

// TestLoadPrices: a price file is merged over the built-in table.
func TestLoadPrices(t *testing.T) {
	p, err := loadPrices("")
	if err != nil || len(p) != len(provider.DefaultPrices()) {
		t.Fatalf("no file: %d prices, %v; want the built-in table", len(p), err)
	}
	file := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(file, []byte(`{"local-model": {"prompt_per_mtok": 1, "completion_per_mtok": 2}, "gpt-4o-mini": {"prompt_per_mtok": 9, "completion_per_mtok": 9}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = loadPrices(file)
	if err != nil {
		t.Fatal(err)
	}
	if p["local-model"].CompletionPerMTok != 2 || p["gpt-4o-mini"].PromptPerMTok != 9 || p["gpt-4o"] != provider.DefaultPrices()["gpt-4o"] {
		t.Errorf("merged table %v; want the file's entries over the built-in ones", p)
	}
	if _, err := loadPrices(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "--prices") {
		t.Errorf("a missing file: %v; want an error naming --prices", err)
	}
}

// TestParseFlags: the worker's flags take the environment's defaults, and values that
// cannot work are refused with the flag's name.
func TestParseFlags(t *testing.T) {
	env := map[string]string{"COSCI_STORE": "postgres://db/cosci", "COSCI_TOOLS": "tools.yaml"}
	getenv := func(k string) string { return env[k] }
	c, err := parseFlags([]string{"--slots", "8", "--offline-latency", "150ms"}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.store != "postgres://db/cosci" || c.tools != "tools.yaml" || c.slots != 8 || c.offline.Latency.String() != "150ms" || c.offline.Fabricate != 0.1 ||
		!slices.Equal(c.offline.Plant, simulator.PlantKinds()) || math.Abs(c.offline.SupportError-0.1) > 1e-9 {
		t.Errorf("parsed %+v", c)
	}
	c, err = parseFlags([]string{"--offline-citation-kinds", "verbatim, negated,spliced", "--offline-support-accuracy", "1"}, getenv)
	if err != nil || !slices.Equal(c.offline.Plant, []string{"verbatim", "negated", "spliced"}) || c.offline.SupportError != 0 {
		t.Errorf("parsed kinds %q and support error %v: %v", c.offline.Plant, c.offline.SupportError, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--slots", "0"}, "--slots"},
		{[]string{"--rps", "-1"}, "--rps"},
		{[]string{"--compute-slots", "0"}, "--compute-slots"},
		{[]string{"--offline-error-rate", "2"}, "--offline-error-rate"},
		{[]string{"--offline-fabricate", "-0.5"}, "--offline-fabricate"},
		{[]string{"--offline-citation-kinds", "verbatim,made-up"}, "--offline-citation-kinds"},
		{[]string{"--offline-citation-kinds", ","}, "--offline-citation-kinds"},
		{[]string{"--offline-support-accuracy", "1.5"}, "--offline-support-accuracy"},
		{[]string{"--offline-support-accuracy", "NaN"}, "--offline-support-accuracy"},
		{[]string{"--offline-first-bias", "NaN"}, "--offline-first-bias"},
		{[]string{"serve"}, "unexpected arguments"},
		{[]string{"--notify-url", "hooks.example/x"}, "--notify-url"},
		{[]string{"--deployment", "cosci"}, "--build-id"},
	} {
		if _, err := parseFlags(tc.args, getenv); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error naming %s", tc.args, err, tc.want)
		}
	}
}

// TestNotifyFlags: --notify-text (or COSCI_NOTIFY_TEXT) sends the webhook the reasons,
// which it is not sent by default; a value of the variable that is not a boolean is
// refused with its name; the start-up log names the webhook's host, never its path.
func TestNotifyFlags(t *testing.T) {
	const hook = "https://hooks.slack.com/services/T0SECRET/B0SECRET/XSECRET"
	tests := []struct {
		args []string
		env  string
		text bool
	}{
		{[]string{"--notify-url", hook}, "", false},
		{[]string{"--notify-url", hook, "--notify-text"}, "", true},
		{[]string{"--notify-url", hook}, "true", true},
		{[]string{"--notify-url", hook, "--notify-text=false"}, "1", false},
	}
	for _, tt := range tests {
		c, err := parseFlags(tt.args, func(k string) string { return map[string]string{"COSCI_NOTIFY_TEXT": tt.env}[k] })
		if err != nil {
			t.Fatalf("%v, COSCI_NOTIFY_TEXT=%q: %v", tt.args, tt.env, err)
		}
		if c.notifyText != tt.text || c.webhook == nil || c.webhook.Text != tt.text {
			t.Errorf("%v, COSCI_NOTIFY_TEXT=%q: text %v, webhook %+v; want %v", tt.args, tt.env, c.notifyText, c.webhook, tt.text)
		}
		if s := c.notifyState(); strings.Contains(s, "SECRET") || !strings.HasPrefix(s, "https://hooks.slack.com/…") {
			t.Errorf("the start-up log says notify=%q; want the host, not the path", s)
		}
	}
	if _, err := parseFlags(nil, func(k string) string { return map[string]string{"COSCI_NOTIFY_TEXT": "sometimes"}[k] }); err == nil || !strings.Contains(err.Error(), "COSCI_NOTIFY_TEXT") {
		t.Errorf("COSCI_NOTIFY_TEXT=sometimes: %v; want an error naming it", err)
	}
	if _, err := parseFlags([]string{"--notify-url", "ftp://hooks.example/T0SECRET"}, func(string) string { return "" }); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a bad --notify-url: %v; want an error without its path", err)
	}
}

// TestStoreMigrating: the store reads unbound records only when the deployment says it is
// migrating, by COSCI_STORE_MIGRATING or --store-migrating (which wins); a value that is
// not a yes or a no is refused, naming the variable.
func TestStoreMigrating(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want bool
		err  string
	}{
		{want: false},
		{env: "1", want: true},
		{env: "true", want: true},
		{env: "0", want: false},
		{args: []string{"--store-migrating"}, want: true},
		{env: "1", args: []string{"--store-migrating=false"}, want: false},
		{env: "soon", err: "COSCI_STORE_MIGRATING"},
	} {
		c, err := parseFlags(tc.args, func(k string) string { return map[string]string{"COSCI_STORE_MIGRATING": tc.env}[k] })
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("env %q: %v; want an error naming %s", tc.env, err, tc.err)
			}
		case err != nil || c.storeMigrating != tc.want:
			t.Errorf("env %q, args %v: migrating %v, %v; want %v", tc.env, tc.args, c.storeMigrating, err, tc.want)
		}
	}
}

// TestSandboxFlags: the sandbox's binary comes from --sandbox or COSCI_SANDBOX, else
// beside the worker's executable, else bin/; its caps from their flags, and caps that
// cannot work are refused.
func TestSandboxFlags(t *testing.T) {
	c, err := parseFlags([]string{"--sandbox-memory-mb", "1024", "--sandbox-threads", "1", "--sandbox-timeout", "1m"}, func(k string) string {
		return map[string]string{"COSCI_SANDBOX": "/opt/cosci/cosci-sandbox"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.sandbox != "/opt/cosci/cosci-sandbox" || c.sandboxCaps.MemoryMB != 1024 || c.sandboxCaps.Threads != 1 || c.sandboxCaps.Timeout.String() != "1m0s" {
		t.Errorf("parsed %q, %+v", c.sandbox, c.sandboxCaps)
	}
	for _, bad := range [][]string{{"--sandbox-memory-mb", "10"}, {"--sandbox-threads", "0"}, {"--sandbox-timeout", "0s"}} {
		if _, err := parseFlags(bad, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v; want refused naming the flag", bad, err)
		}
	}
	exe := func() (string, error) { return "/srv/cosci/bin/cosci-worker", nil }
	cases := []struct {
		given  string
		exists []string
		want   string
	}{
		{"/given", []string{"/srv/cosci/bin/cosci-sandbox"}, "/given"},
		{"", []string{"/srv/cosci/bin/cosci-sandbox", "bin/cosci-sandbox"}, "/srv/cosci/bin/cosci-sandbox"},
		{"", []string{"bin/cosci-sandbox"}, "bin/cosci-sandbox"},
		{"", nil, ""},
	}
	for _, c := range cases {
		if got := sandboxBinary(c.given, exe, func(p string) bool { return slices.Contains(c.exists, p) }); got != c.want {
			t.Errorf("given %q, existing %v: %q; want %q", c.given, c.exists, got, c.want)
		}
	}
}

// TestLabDataFlags: --lab-data (or COSCI_LAB_DATA) names the data folder and
// --lab-data-queue its queue; a worker whose folder is not a directory does not start it.
func TestLabDataFlags(t *testing.T) {
	c, err := parseFlags([]string{"--lab-data-queue", "lab-b"}, func(k string) string {
		return map[string]string{"COSCI_LAB_DATA": "/srv/lab"}[k]
	})
	if err != nil || c.labData != "/srv/lab" || c.labQueue != "lab-b" {
		t.Fatalf("parsed %q on %q, %v", c.labData, c.labQueue, err)
	}
	ws := &workerSet{}
	c.labData = filepath.Join(t.TempDir(), "missing")
	if err := ws.startLabData(c, nil); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a missing folder: %v", err)
	}
	c.labData = ""
	if err := ws.startLabData(c, nil); err != nil || len(ws.started) != 0 {
		t.Errorf("no folder: %v, %d workers started", err, len(ws.started))
	}
}
