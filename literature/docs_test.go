package main

import (
	"os/exec"
	"regexp"
	"testing"

	"github.com/cosci-dev/cosci/internal/doccheck"
)

// TestDocsNameEveryLiteratureFlag: every flag of the literature server appears in the
// README or a docs/*.md file (docs/commands.md's table of them), as the starter's and the
// worker's do (starter/docs_test.go, worker/docs_test.go).
func TestDocsNameEveryLiteratureFlag(t *testing.T) {
	docs := doccheck.All(doccheck.Files(t, ".."))
	out, err := exec.Command(build(t), "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("literature -h: %v\n%s", err, out)
	}
	flags := regexp.MustCompile(`(?m)^  -([\w-]+)`).FindAllStringSubmatch(string(out), -1)
	if len(flags) < 6 {
		t.Fatalf("found %d flags in the literature server's usage; does it still print them?\n%s", len(flags), out)
	}
	for _, f := range flags {
		if !doccheck.Mentions(docs, "--"+f[1]) {
			t.Errorf("no doc mentions the literature server's flag --%s: document it in docs/commands.md", f[1])
		}
	}
}
