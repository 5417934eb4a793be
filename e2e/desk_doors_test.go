package e2e

// The desk's doors, tried as the issue that closed them tried them (curl against the
// built desk): a page of another site rebound to 127.0.0.1, a client's own identity
// header ahead of the proxy's, a proxy range that is anyone, the local mode without its
// link.

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startDesk starts the built desk with these flags and environment, and waits for it to
// say it serves.
func startDesk(t *testing.T, bin string, env []string, flags ...string) *workerProc {
	t.Helper()
	d := startWorkerBinary(t, bin, serverAddress, "", t.TempDir(), env, flags...)
	eventually(t, 60*time.Second, "the desk to say it serves", func() (bool, error) {
		b, _ := os.ReadFile(d.log)
		return strings.Contains(string(b), "desk on http://"), nil
	})
	return d
}

// probe sends one request and returns its status and body; mod sets what it carries.
func probe(t *testing.T, method, url string, mod func(*http.Request)) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(req)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

func TestDeskDoors(t *testing.T) {
	bin := filepath.Join(buildDir, "desk")
	if out, err := goBuild(bin, "../desk"); err != nil {
		t.Fatalf("cannot build the desk: %v\n%s", err, out)
	}
	rebound := func(port int) func(*http.Request) {
		return func(r *http.Request) { r.Host = fmt.Sprintf("rebind.attacker.example:%d", port) }
	}

	// The local mode, as `go run ./desk` and `make demo` start it.
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	local := startDesk(t, bin, nil, "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--local-user", "me")
	b, _ := os.ReadFile(local.log)
	link := regexp.MustCompile(`sign in on this machine: (\S+)`).FindSubmatch(b)
	if link == nil || !strings.Contains(string(link[1]), "/?token=") {
		t.Fatalf("the local desk printed no sign-in link:\n%s", b)
	}
	if code, body, _ := probe(t, "GET", base+"/sessions", rebound(port)); code != http.StatusForbidden || strings.Contains(body, "csrf") {
		t.Errorf("local, a rebound Host: %d, want 403 with nothing of the desk", code)
	}
	code, body, _ := probe(t, "GET", base+"/sessions", nil)
	if code != http.StatusUnauthorized || !strings.Contains(body, "open the link the desk printed") || strings.Contains(body, "csrf") {
		t.Errorf("local, this machine without the link: %d\n%.300s\nwant 401 that says how to sign in", code, body)
	}
	code, _, resp := probe(t, "GET", string(link[1]), nil)
	if code != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		t.Fatalf("local, the printed link: %d, cookies %v", code, resp.Cookies())
	}
	cookie := resp.Cookies()[0]
	withCookie := func(r *http.Request) { r.AddCookie(cookie) }
	code, body, _ = probe(t, "GET", base+"/sessions", withCookie)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || csrf == nil {
		t.Fatalf("local, signed in by the link: %d", code)
	}
	// Even with the cookie and the token (which a rebound page could not have), a request
	// naming another host is refused.
	code, _, _ = probe(t, "POST", base+"/s/x/command/suspend?csrf="+csrf[1], func(r *http.Request) { withCookie(r); rebound(port)(r) })
	if code != http.StatusForbidden {
		t.Errorf("local, a rebound Host with the cookie: %d, want 403", code)
	}

	// The proxy mode: a client's own groups header ahead of the proxy's.
	key := "COSCI_DESK_KEY=" + strings.Repeat("5e", 32)
	pport := freePort(t)
	pbase := fmt.Sprintf("http://127.0.0.1:%d", pport)
	startDesk(t, bin, []string{key}, "--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--admin-group", "cosci-admins",
		"--scientist-group", "lab", "--listen", fmt.Sprintf("127.0.0.1:%d", pport))
	as := func(groups ...string) func(*http.Request) {
		return func(r *http.Request) {
			r.Header.Set("X-Forwarded-Email", "eve@lab.example")
			for _, g := range groups {
				r.Header.Add("X-Forwarded-Groups", g)
			}
		}
	}
	if code, body, _ := probe(t, "GET", pbase+"/sessions", as("cosci-admins", "lab")); code != http.StatusBadRequest || strings.Contains(body, "admin") && !strings.Contains(body, "identity header") {
		t.Errorf("proxy, groups twice: %d %.200q, want 400", code, body)
	}
	if code, body, _ := probe(t, "GET", pbase+"/sessions", as("lab")); code != http.StatusOK || strings.Contains(body, `class="role">admin`) {
		t.Errorf("proxy, the proxy's groups alone: %d, an admin: %v", code, strings.Contains(body, `class="role">admin`))
	}
	if code, _, _ := probe(t, "GET", pbase+"/sessions", func(r *http.Request) { as("lab")(r); rebound(pport)(r) }); code != http.StatusForbidden {
		t.Errorf("proxy, a rebound Host: %d, want 403", code)
	}
	// A proxy range that is anyone is refused at the start.
	wide := startWorkerBinary(t, bin, serverAddress, "", t.TempDir(), []string{key}, "--auth", "proxy", "--trusted-proxy", "0.0.0.0/0", "--listen", "127.0.0.1:0")
	if err := wide.Wait(t, 60*time.Second); err == nil {
		t.Error("a desk trusting 0.0.0.0/0 started")
	}
	if b, _ := os.ReadFile(wide.log); !strings.Contains(string(b), "--trusted-proxy-wide") {
		t.Errorf("the desk trusting 0.0.0.0/0 says:\n%s", b)
	}
}
