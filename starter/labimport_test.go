package main

import (
	"strings"
	"testing"
)

// `data add --from-worker NAME` takes no FILE, names the table after NAME, and reads the
// data folder's queue; a FILE and --from-worker together are refused.
func TestParseFromWorker(t *testing.T) {
	f, err := parseLab("data", []string{"add", "--session", "s1", "--from-worker", "Plate reads.csv"})
	if err != nil || f.fromWorker != "Plate reads.csv" || f.file != "" || f.table != "Plate_reads" || f.labQueue != "cosci-lab-data" {
		t.Errorf("parsed %+v, %v", f, err)
	}
	f, err = parseLab("experiment", []string{"result", "--session", "s1", "--experiment", "x-0001", "--from-worker", "r.csv", "--lab-data-queue", "lab-b"})
	if err != nil || f.fromWorker != "r.csv" || f.labQueue != "lab-b" || f.table != "" { // a result's table is its plan's (expectedTable)
		t.Errorf("parsed %+v, %v", f, err)
	}
	if _, err := parseLab("data", []string{"add", "--session", "s1", "--from-worker", "a.csv", "b.csv"}); err == nil || !strings.Contains(err.Error(), "takes no arguments") {
		t.Errorf("a FILE and --from-worker: %v", err)
	}
}
