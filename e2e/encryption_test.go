package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/cosci-dev/cosci/codec"
	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// TestEncryptedSession runs a grounded session with the lab's key (made by starter
// keygen), under the id the starter gives it, and a worker with a webhook: the scientist
// starts it, refines the goal, adds a hypothesis and gives feedback with the starter, and
// the session runs to its end. Then it reads what an onlooker without the key would:
// Temporal's raw history of every run, the session's description (search attributes, memo,
// summary) and its visibility record, every file of the session store and its path, the
// webhook's payloads and the worker's log. None of the goal (not a word of it: the id is
// the workflow id, never encrypted), the refinement, the scientist's texts, a hypothesis
// title or a tool result is there; through the key, all of them read back; and without the
// key the starter refuses with what to do.
func TestEncryptedSession(t *testing.T) {
	bin := starter(t)
	r := runStarter(t, bin, serverAddress, "keygen", "--id", "lab-1")
	keysFile := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(keysFile, []byte(r.stdout), 0o600); err != nil || r.code != 0 {
		t.Fatalf("keygen: %d, %v", r.code, err)
	}
	keys, err := keyring.FromEnv(func(k string) string { return map[string]string{"COSCI_KEYS_FILE": keysFile}[k] })
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"COSCI_KEYS_FILE=" + keysFile}

	library, err := filepath.Abs(fixtureLibrary)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "servers:\n  - name: literature\n    command: [%q, --library, %q, --index, %q]\n",
		literatureBinary, library, t.TempDir()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The lab's webhook keeps every payload it is sent.
	var (
		hookMu   sync.Mutex
		payloads [][]byte
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hookMu.Lock()
		payloads = append(payloads, b)
		hookMu.Unlock()
	}))
	defer hook.Close()
	storeDir := t.TempDir()
	w := startWorkerEnv(t, storeDir, env, "--tools", cfg, "--offline-latency", "150ms", "--notify-url", hook.URL+"/services/T0/B0/hook-secret")

	secrets := map[string]string{
		"goal":       "Explain how tardigrades survive desiccation through cryptobiosis-xq7",
		"refinement": "focus on trehalose-vitrification-kz2",
		"title":      "Scientist-marker-pq9 intrinsically disordered proteins",
		"statement":  "Statement-marker-vw4: CAHS proteins form gels that protect membranes",
		"feedback":   "feedback-marker-jj3 membranes",
	}
	// The words of the goal a reader would know it by; none may be anywhere in clear.
	goalWords := []string{"tardigrades", "desiccation", "cryptobiosis"}
	r = runStarterIn(t, bin, serverAddress, "", env, "start", "--goal", secrets["goal"],
		"--max-hypotheses", "8", "--review-types", "initial", "--tools", "literature.search")
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 {
		t.Fatalf("start exited %d", r.code)
	}
	t.Cleanup(func() { terminateIfRunning(t, id) })
	if !regexp.MustCompile(`^s-[0-9a-f]{16}$`).MatchString(id) {
		t.Fatalf("with the lab's keys, start named the session %q; want s- and 16 hex digits", id)
	}
	c, err := client.Dial(client.Options{HostPort: serverAddress, Namespace: "default", DataConverter: codec.DataConverter(keys)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eventually(t, 90*time.Second, "two hypotheses", func() (bool, error) {
		v, err := c.QueryWorkflow(context.Background(), id, "", workflows.QueryProgress)
		if err != nil {
			return false, err
		}
		var p struct {
			HypothesesGenerated int `json:"hypotheses_generated"`
		}
		return p.HypothesesGenerated >= 2, v.Get(&p)
	})
	for _, args := range [][]string{
		{"refine-goal", id, "--focus", secrets["refinement"]},
		{"add-hypothesis", id, "--title", secrets["title"], "--statement", secrets["statement"], "--prediction", "Gels form on drying"},
		{"feedback", id, "--toward", secrets["feedback"]},
	} {
		if r := runStarterIn(t, bin, serverAddress, "", env, args...); r.code != 0 {
			t.Fatalf("%s exited %d", args[0], r.code)
		}
	}
	run := c.GetWorkflow(context.Background(), id, "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var res workflows.Result
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("the session: %v", err)
	}

	// Through the key: the texts read back.
	st, err := store.Open(context.Background(), storeDir)
	if err != nil {
		t.Fatal(err)
	}
	st.Encrypt(keys)
	hkeys, err := st.Backend().List(context.Background(), id, "hypotheses/")
	if err != nil || len(hkeys) < 2 {
		t.Fatalf("hypotheses in the store: %v, %v", hkeys, err)
	}
	h, err := st.Hypothesis(context.Background(), id, strings.TrimSuffix(filepath.Base(hkeys[0]), ".json"))
	if err != nil || h.Title == "" {
		t.Fatalf("a hypothesis through the key: %+v, %v", h, err)
	}
	secrets["a hypothesis title"] = h.Title
	keysOfTools, err := st.Backend().List(context.Background(), id, "tools/")
	if err != nil || len(keysOfTools) == 0 {
		t.Fatalf("no tool results stored (%v): did the session call its tool?", err)
	}
	digest := strings.TrimSuffix(filepath.Base(keysOfTools[0]), ".json")
	rec, err := st.ToolRecord(context.Background(), id, digest)
	if err != nil || len(rec.Content) < 40 {
		t.Fatalf("a tool result through the key: %q, %v", rec.Content, err)
	}
	secrets["a tool result"] = rec.Content[:40]
	if r := runStarterIn(t, bin, serverAddress, "", env, "status", id); r.code != 0 || !strings.Contains(r.stdout, "cryptobiosis-xq7") {
		t.Errorf("starter status with the key: exit %d; want the goal in the clear", r.code)
	}

	// Without it: nothing.
	raw := bytes.NewBuffer(rawHistory(t, id))
	d, err := temporalClient.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := proto.Marshal(d)
	raw.Write(b)
	if d.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("session status %v", d.GetWorkflowExecutionInfo().GetStatus())
	}
	visible := visibilityRecord(t, id)
	raw.Write(visible)
	files, nfiles := storeBytes(t, storeDir)
	paths := storePaths(t, storeDir)
	// What is not research stays readable: the search looks at the right bytes.
	if !bytes.Contains(raw.Bytes(), []byte(workflows.WorkflowType)) || !bytes.Contains(raw.Bytes(), []byte("Generate")) {
		t.Error("the raw history lacks the workflow and activity types: the search reads the wrong bytes")
	}
	if !bytes.Contains(files, []byte("cosci-sealed-2")) {
		t.Error("no sealed record among the store's files")
	}
	if !bytes.Contains(paths, []byte(id)) || !bytes.Contains(visible, []byte(id)) {
		t.Error("the store's paths or the visibility record lack the session id: the search reads the wrong bytes")
	}

	// The webhook: ids, the state and the kind of event, no reason; the session waited for
	// its word of the end, so it has been delivered.
	hookMu.Lock()
	sent := bytes.Join(payloads, []byte("\n"))
	hookMu.Unlock()
	var last struct {
		Event          string  `json:"event"`
		SessionID      string  `json:"session_id"`
		State          string  `json:"state"`
		Reason         *string `json:"reason"`
		ReasonWithheld bool    `json:"reason_withheld"`
	}
	if len(payloads) == 0 || json.Unmarshal(payloads[len(payloads)-1], &last) != nil ||
		last.Event != "completed" || last.SessionID != id || last.State != "completed" || last.Reason != nil || !last.ReasonWithheld {
		t.Errorf("the webhook was sent %s; want the session's end, its id and state, and the reason withheld", sent)
	}

	if r := runStarter(t, bin, serverAddress, "status", id); r.code != 1 || !strings.Contains(r.output(), "COSCI_KEYS_FILE") {
		t.Errorf("starter status without the key: exit %d; want 1, saying to set COSCI_KEYS_FILE", r.code)
	}

	// The worker's log, read once it has stopped.
	w.Stop(t)
	logged, err := os.ReadFile(w.log)
	if err != nil || !bytes.Contains(logged, []byte(id)) {
		t.Fatalf("the worker's log (%v) does not name the session: the search reads the wrong bytes", err)
	}
	if bytes.Contains(logged, []byte("hook-secret")) {
		t.Error("the worker's log holds the webhook's secret path")
	}

	places := map[string][]byte{"Temporal's raw history, description or visibility": raw.Bytes(), "the session store's files": files,
		"the session store's paths": paths, "the webhook's payloads": sent, "the worker's log": logged}
	for what, text := range secrets {
		for where, b := range places {
			if bytes.Contains(b, []byte(text)) {
				t.Errorf("%s hold %s in the clear: %q", where, what, text)
			}
		}
	}
	for _, word := range goalWords {
		for where, b := range places {
			if bytes.Contains(bytes.ToLower(b), []byte(word)) {
				t.Errorf("%s hold a word of the goal in the clear: %q", where, word)
			}
		}
	}
	t.Logf("%d history bytes, %d files (%d bytes), %d webhook payloads and %d log bytes hold none of %d texts and %d goal words",
		raw.Len(), nfiles, len(files), len(payloads), len(logged), len(secrets), len(goalWords))
}

// visibilityRecord is the session's record in Temporal's visibility, as `temporal workflow
// list` reads it, once it shows the session closed.
func visibilityRecord(t *testing.T, id string) []byte {
	t.Helper()
	var record []byte
	eventually(t, 30*time.Second, "the visibility record of the closed session", func() (bool, error) {
		resp, err := temporalClient.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus = 'Completed'", id)})
		if err != nil || len(resp.GetExecutions()) == 0 {
			return false, err
		}
		record, err = proto.Marshal(resp)
		return true, err
	})
	return record
}

// storePaths are the paths of every file and folder of a directory store, one a line.
func storePaths(t *testing.T, dir string) []byte {
	t.Helper()
	var paths bytes.Buffer
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		paths.WriteString(rel + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths.Bytes()
}

// TestKeyRotation rotates the lab's key under a running session the way docs/operating.md
// says: the new key is added second and every process restarted, then moved first and
// every process restarted again. Each restarted worker replays the session's history,
// sealed with the old key; the session completes; its history holds payloads sealed with
// both keys, and the store records of both.
func TestKeyRotation(t *testing.T) {
	bin := starter(t)
	keygen := func(id string) string {
		r := runStarter(t, bin, serverAddress, "keygen", "--id", id)
		if r.code != 0 {
			t.Fatalf("keygen exited %d", r.code)
		}
		return strings.TrimSpace(r.stdout)
	}
	oldKey, newKey := keygen("lab-old"), keygen("lab-new")
	keysFile := filepath.Join(t.TempDir(), "keys.txt")
	writeKeys := func(lines ...string) {
		if err := os.WriteFile(keysFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"COSCI_KEYS_FILE=" + keysFile}
	storeDir := t.TempDir()
	flags := []string{"--offline-latency", "100ms"}
	progressed := func(id string, n int) {
		eventually(t, 90*time.Second, fmt.Sprintf("%d hypotheses", n), func() (bool, error) {
			r := runStarterIn(t, bin, serverAddress, "", env, "progress", id, "--json")
			var p struct {
				HypothesesGenerated int `json:"hypotheses_generated"`
			}
			if r.code != 0 {
				return false, fmt.Errorf("progress exited %d: %s", r.code, r.stderr)
			}
			return p.HypothesesGenerated >= n, json.Unmarshal([]byte(r.stdout), &p)
		})
	}

	writeKeys(oldKey)
	w := startWorkerEnv(t, storeDir, env, flags...)
	id := newSessionID(t)
	t.Cleanup(func() { terminateIfRunning(t, id) })
	if r := runStarterIn(t, bin, serverAddress, "", env, "start", "--id", id, "--goal", "Explain how tardigrades survive desiccation",
		"--max-hypotheses", "24", "--review-types", "initial"); r.code != 0 {
		t.Fatalf("start exited %d", r.code)
	}
	progressed(id, 4)

	// Step 1: the new key second, every process restarted.
	writeKeys(oldKey, newKey)
	w.Stop(t)
	w = startWorkerEnv(t, storeDir, env, flags...)
	progressed(id, 10)

	// Step 2: the new key first, every process restarted.
	writeKeys(newKey, oldKey)
	w.Stop(t)
	startWorkerEnv(t, storeDir, env, flags...)
	r := runStarterIn(t, bin, serverAddress, "", env, "result", id)
	if r.code != 0 || !strings.Contains(r.stdout, "completed: reached max_hypotheses (24)") {
		t.Fatalf("after the rotation, result exited %d", r.code)
	}

	history := rawHistory(t, id)
	files, _ := storeBytes(t, storeDir)
	sealedWith := map[string]int{}
	for _, k := range []string{"lab-old", "lab-new"} {
		sealedWith[k] = bytes.Count(history, []byte(k))
		if sealedWith[k] == 0 || !bytes.Contains(files, []byte(k)) {
			t.Errorf("key %s sealed %d history payloads and some store record: %v; want both keys used", k, sealedWith[k], bytes.Contains(files, []byte(k)))
		}
	}
	t.Logf("history payloads by key: %v", sealedWith)
}

// rawHistory is every run's history of a session as the server keeps it: protobuf bytes,
// each payload as it was encoded.
func rawHistory(t *testing.T, id string) []byte {
	t.Helper()
	var raw bytes.Buffer
	for _, events := range sessionHistories(t, id) {
		for _, e := range events {
			b, err := proto.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			raw.Write(b)
		}
	}
	return raw.Bytes()
}

// storeBytes is every file of a directory store, one after another, and how many there are.
func storeBytes(t *testing.T, dir string) ([]byte, int) {
	t.Helper()
	var all bytes.Buffer
	n := 0
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		all.Write(b)
		n++
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all.Bytes(), n
}
