package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// TestDemoLab runs `make demo-lab`'s script (scripts/demo-lab.sh) on the harness's dev
// server, with binaries built from this checkout: a session with the simulated lab's table,
// an experiment planned for its top hypothesis and confirmed, the simulated lab's result
// given, the registered analysis run in the sandbox. The session's own account (its
// experiments query) is the truth the report is held to: report.json and report.md cite
// the analysis that counted, analysis:<id>, with the verdict the session recorded, and the
// store holds that analysis's record with the p the report shows.
func TestDemoLab(t *testing.T) {
	bin := demoLabBinaries(t)
	storeDir, data := t.TempDir(), t.TempDir()
	id := newSessionID(t)
	t.Cleanup(func() { terminateIfRunning(t, id) })
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "scripts", "demo-lab.sh"))
	cmd.Env = append(cleanEnv(serverAddress), "COSCI_BIN="+bin, "COSCI_DEMO_DATA="+data, "COSCI_STORE="+storeDir,
		"COSCI_DEMO_ID="+id, fmt.Sprintf("COSCI_DEMO_DESK=127.0.0.1:%d", port), "COSCI_SANDBOX="+filepath.Join(bin, "cosci-sandbox"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/demo-lab.sh took %s:\n%s", time.Since(start).Round(time.Second), out)
	if err != nil {
		dumpFile(os.Stderr, filepath.Join(data, "worker.log"))
		t.Fatalf("scripts/demo-lab.sh: %v", err)
	}

	// The session has ended; a worker of the test's answers its query from its history.
	startWorker(t, storeDir)
	view := mustQuery[workflows.ExperimentsView](t, id, workflows.QueryExperiments)
	if len(view.Experiments) != 1 || view.Experiments[0].Result == nil {
		t.Fatalf("the session's experiments: %+v; want one with a result", view.Experiments)
	}
	e := view.Experiments[0]
	standing := string(e.Result.Standing)
	run := ""
	for _, l := range e.Labels {
		if l.Kind == experiment.PreRegistered {
			run = l.Run.ID
		}
	}
	if standing == "" || run == "" {
		t.Fatalf("experiment %s: standing %q, pre-registered run %q; want both (refused: %s)", e.ID, standing, run, e.Refused)
	}

	reportDir := filepath.Join(data, "report-"+id)
	x := readDemoReport(t, reportDir)
	if len(x.Lab) != 1 || len(x.Lab[0].Results) != 1 {
		t.Fatalf("report.json's lab: %+v; want the one experiment with its result", x.Lab)
	}
	got := x.Lab[0].Results[0]
	if x.Lab[0].Experiment != e.ID || got.AnalysisID != run || got.Citation != "analysis:"+run || got.Verdict != standing {
		t.Errorf("report.json: %s cites %q (%q), verdict %q; the session: %s, analysis:%s, %s", x.Lab[0].Experiment, got.AnalysisID, got.Citation, got.Verdict, e.ID, run, standing)
	}
	if got.Outcome == nil || got.Outcome.P != e.Result.Outcome.P || got.Outcome.Q == nil {
		t.Errorf("report.json's outcome %+v; want p %g with its q", got.Outcome, e.Result.Outcome.P)
	}
	md, err := os.ReadFile(filepath.Join(reportDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(md[strings.Index(string(md), "## Tested in the lab"):])
	for _, want := range []string{fmt.Sprintf("### %s on %s: %s", e.ID, e.Hypothesis, standing), "- **Analysis:** `analysis:" + run + "` pre-registered"} {
		if !strings.Contains(section, want) {
			t.Errorf("report.md's lab section lacks %q", want)
		}
	}

	st, err := store.Open(ctx, storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err := st.Analysis(ctx, id, run)
	if err != nil || rec.Stats == nil || rec.Stats.P != got.Outcome.P || rec.Kind != string(experiment.PreRegistered) {
		t.Errorf("the store's analysis %s: %+v, %v; want the pre-registered run with p %g", run, rec, err, got.Outcome.P)
	}
}

// demoReport is what TestDemoLab reads of report.json.
type demoReport struct {
	Lab []struct {
		Experiment string `json:"experiment"`
		Results    []struct {
			Verdict    string `json:"verdict"`
			AnalysisID string `json:"analysis_id"`
			Citation   string `json:"citation"`
			Outcome    *struct {
				P float64  `json:"p"`
				Q *float64 `json:"q"`
			} `json:"outcome"`
		} `json:"results"`
	} `json:"lab"`
}

func readDemoReport(t *testing.T, dir string) demoReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var x demoReport
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

// demoLabBinaries is a bin directory as `make build` leaves it, built from this checkout:
// the harness's worker, the starter, the desk, the simulated lab, the sandbox's child
// (cgo; quick once the build cache holds DuckDB) and the Temporal CLI.
func demoLabBinaries(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for name, pkg := range map[string]string{"desk": "../desk", "simlab": "../scripts/simlab"} {
		if out, err := goBuild(filepath.Join(bin, name), pkg); err != nil {
			t.Fatalf("%s does not build: %v\n%s", pkg, err, out)
		}
	}
	for name, target := range map[string]string{"cosci-worker": workerBinary, "starter": starter(t), "temporal": temporalBin,
		"cosci-sandbox": filepath.Join(filepath.Dir(workerBinary), "cosci-sandbox")} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}
