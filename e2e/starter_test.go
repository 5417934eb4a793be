package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// starterRun is one finished starter command.
type starterRun struct {
	code           int
	stdout, stderr string
}

func (r starterRun) output() string { return r.stdout + r.stderr }

// runStarter runs the starter binary with the given Temporal address and arguments.
func runStarter(t *testing.T, bin, address string, args ...string) starterRun {
	t.Helper()
	return runStarterIn(t, bin, address, "", nil, args...)
}

// runStarterIn is runStarter in a working directory of its own (dir; "" for this one),
// with extra environment variables (KEY=value).
func runStarterIn(t *testing.T, bin, address, dir string, env []string, args ...string) starterRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cleanEnv(address), env...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := starterRun{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		r.code = exit.ExitCode()
	default:
		t.Fatalf("starter %q: %v\nstdout: %s\nstderr: %s", args, err, r.stdout, r.stderr)
	}
	t.Logf("starter %s -> exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, strings.TrimSpace(r.stdout), strings.TrimSpace(r.stderr))
	return r
}

// TestStarterCLI drives a session with the scientist's command-line client.
func TestStarterCLI(t *testing.T) {
	bin := starter(t)
	startWorker(t, t.TempDir(), "--offline-latency", "300ms")

	r := runStarter(t, bin, serverAddress, "start", "--goal", "Explain how tardigrades survive desiccation", "--max-hypotheses", "30")
	if r.code != 0 {
		t.Fatalf("starter start exited %d; want 0", r.code)
	}
	id := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	if id == "" {
		t.Fatalf("starter start printed no session ID on stdout")
	}
	t.Cleanup(func() { terminateIfRunning(t, id) })
	eventually(t, 30*time.Second, "the started session to be active", func() (bool, error) {
		st, err := query[workflows.Status](id, workflows.QueryStatus)
		return st.State == session.Active, err
	})

	if r := runStarter(t, bin, serverAddress, "suspend", id, "--reason", "x"); r.code != 0 {
		t.Errorf("starter suspend exited %d; want 0", r.code)
	}
	if st := mustQuery[workflows.Status](t, id, workflows.QueryStatus); st.Reason != "x" {
		t.Errorf("after starter suspend --reason x the status is %+v; want reason x", st)
	}
	if r := runStarter(t, bin, serverAddress, "resume", id); r.code != 0 {
		t.Errorf("starter resume exited %d; want 0", r.code)
	}
	if r := runStarter(t, bin, serverAddress, "resume", id); r.code != 1 || !strings.Contains(r.output(), "cannot resume") {
		t.Errorf("a second starter resume exited %d; want 1, saying \"cannot resume\"", r.code)
	}
	if r := runStarter(t, bin, serverAddress, "status", id); r.code != 0 || !strings.Contains(r.stdout, id) {
		t.Errorf("starter status exited %d; want 0, with the session ID in its output", r.code)
	}
	if r := runStarter(t, bin, serverAddress, "terminate", id); r.code != 0 {
		t.Errorf("starter terminate exited %d; want 0", r.code)
	}
	res, err := result(id, 60*time.Second)
	if err != nil {
		t.Fatalf("result of the session the starter terminated: %v", err)
	}
	if res.State != session.Completed || !strings.Contains(res.StopReason, "terminated") {
		t.Errorf("result: state %q, stop reason %q; want completed, terminated by the scientist", res.State, res.StopReason)
	}

	// A request the starter refuses starts nothing.
	invalidID := newSessionID(t)
	r = runStarter(t, bin, serverAddress, "start", "--goal", "", "--id", invalidID)
	if r.code != 2 || !strings.Contains(r.output(), "research_goal") {
		t.Errorf("starter start --goal \"\" exited %d; want 2, naming research_goal", r.code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var notFound *serviceerror.NotFound
	if _, err := temporalClient.DescribeWorkflowExecution(ctx, invalidID, ""); !errors.As(err, &notFound) {
		t.Errorf("after the refused start, describing %s gave %v; want NotFound (nothing started)", invalidID, err)
	}

	// Without a server, the starter says what to check: a server that is not the local
	// dev server's address gets no make target for a hint.
	r = runStarter(t, bin, "127.0.0.1:1", "status", "x")
	if r.code == 0 || !strings.Contains(r.output(), "no Temporal server") || !strings.Contains(r.output(), "TEMPORAL_ADDRESS") || strings.Contains(r.output(), "make server") {
		t.Errorf("starter status with no server exited %d; want non-zero, mentioning \"no Temporal server\" and TEMPORAL_ADDRESS, and no make target", r.code)
	}
}
