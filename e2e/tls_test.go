package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/e2e/temporalpg"
	"github.com/cosci-dev/cosci/internal/pgtest"
	"github.com/cosci-dev/cosci/workflows"
)

// TestMutualTLSProfile runs a session against a Temporal server whose frontend requires
// mutual TLS (the release production runs, on PostgreSQL), with the worker and the starter
// configured the standard way: a temporal.toml profile naming the client certificate, its
// key and the server's CA, chosen with TEMPORAL_PROFILE. A profile without the client
// certificate is refused by the server, and the starter says it cannot connect.
func TestMutualTLSProfile(t *testing.T) {
	pg, err := pgtest.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	pki, err := temporalpg.WriteTestPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(buildDir, "tls-server")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := temporalpg.StartTLS(ctx, dir, pg, workflows.SearchAttributes, pki)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()

	profiles := filepath.Join(t.TempDir(), "temporal.toml")
	if err := os.WriteFile(profiles, fmt.Appendf(nil, `# The lab's Temporal, with mutual TLS.
[profile.lab]
address = %[1]q
namespace = "default"

[profile.lab.tls]
client_cert_path = %[2]q
client_key_path = %[3]q
server_ca_cert_path = %[4]q
server_name = "localhost"

# The same server, without a client certificate.
[profile.nocert]
address = %[1]q
namespace = "default"

[profile.nocert.tls]
server_ca_cert_path = %[4]q
server_name = "localhost"
`, srv.Address(), pki.ClientCertFile, pki.ClientKeyFile, pki.CAFile), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(profile string) []string {
		return []string{"TEMPORAL_CONFIG_FILE=" + profiles, "TEMPORAL_PROFILE=" + profile}
	}

	startWorkerOn(t, srv.Address(), "", t.TempDir(), env("lab"), "--offline-latency", "20ms")
	bin := starter(t)
	r := runStarterIn(t, bin, srv.Address(), "", env("lab"), "start", "--goal", "Explain how tardigrades survive desiccation", "--max-hypotheses", "4", "--wait")
	if r.code != 0 || !strings.Contains(r.stdout, "completed") {
		t.Fatalf("a session over mutual TLS: exit %d", r.code)
	}
	r = runStarterIn(t, bin, srv.Address(), "", env("nocert"), "list")
	if r.code != 1 || !strings.Contains(r.output(), "no Temporal server answers") {
		t.Errorf("without the client certificate: exit %d; want 1, saying the server does not answer", r.code)
	}
}
