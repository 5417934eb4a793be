package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
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
// certificate is refused by the server, and the starter says it cannot connect. The desk,
// the scientists' way in, connects the same way, and is refused the same way.
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

	storeDir := t.TempDir()
	startWorkerOn(t, srv.Address(), "", storeDir, env("lab"), "--offline-latency", "20ms")
	bin := starter(t)
	r := runStarterIn(t, bin, srv.Address(), "", env("lab"), "start", "--goal", "Explain how tardigrades survive desiccation", "--max-hypotheses", "4", "--wait")
	if r.code != 0 || !strings.Contains(r.stdout, "completed") {
		t.Fatalf("a session over mutual TLS: exit %d", r.code)
	}
	id := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	r = runStarterIn(t, bin, srv.Address(), "", env("nocert"), "list")
	if r.code != 1 || !strings.Contains(r.output(), "no Temporal server answers") {
		t.Errorf("without the client certificate: exit %d; want 1, saying the server does not answer", r.code)
	}

	// The desk is a client of the namespace like the workers, with the same profile: it
	// shows the session it reads over mutual TLS, and without the certificate it does
	// not start.
	deskBin := filepath.Join(buildDir, "desk")
	if out, err := goBuild(deskBin, "../desk"); err != nil {
		t.Fatalf("cannot build the desk: %v\n%s", err, out)
	}
	port := freePort(t)
	deskEnv := append(env("lab"), "COSCI_DESK_KEY="+strings.Repeat("5e", 32))
	startWorkerBinary(t, deskBin, srv.Address(), "", storeDir, deskEnv,
		"--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--admin-group", "admins", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	page := ""
	eventually(t, 60*time.Second, "the desk to show the session", func() (bool, error) {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/s/%s", port, id), nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("X-Forwarded-Email", "root@lab.example")
		req.Header.Set("X-Forwarded-Groups", "admins")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		page = string(b)
		return res.StatusCode == http.StatusOK, err
	})
	if !strings.Contains(page, id) || !strings.Contains(page, "completed") {
		t.Errorf("the desk's page of session %s over mutual TLS does not show it completed:\n%s", id, tail([]byte(page), 40))
	}
	noCert := startWorkerBinary(t, deskBin, srv.Address(), "", storeDir, append(env("nocert"), "COSCI_DESK_KEY="+strings.Repeat("5e", 32)),
		"--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--listen", "127.0.0.1:0")
	if err := noCert.Wait(t, 60*time.Second); err == nil {
		t.Errorf("a desk without the client certificate started; want it refused")
	}
	if b, _ := os.ReadFile(noCert.log); !strings.Contains(string(b), "no Temporal server answers") {
		t.Errorf("a desk without the client certificate says:\n%s\nwant that no Temporal server answers", b)
	}
}
