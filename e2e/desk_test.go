package e2e

// The desk in a real browser (issue #31, part 4): Debian's chromium, driven by chromedp,
// against the desk built from ../desk, a worker, the suite's dev server and an OpenID
// Connect provider the test runs (internal/auth/idptest). Three people sign in at the
// provider, each in a browser context of their own (their own cookies): ada starts a
// session and watches its live line move without reloading; bob, another scientist, is
// refused it, reads it once ada shares it for reading, and still cannot steer it; root,
// an admin, steers it.

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cosci-dev/cosci/internal/auth/idptest"
)

// chromium is Debian's browser, which `make test` installs when it is missing.
const chromium = "/usr/bin/chromium"

// freePort is a loopback port nobody listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// browser starts one headless chromium for the test, with a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("no chromium at %s (%v): install it with apt-get install -y chromium (make test does)", chromium, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true), chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, without a timeout
		t.Fatalf("cannot start chromium: %v", err)
	}
	return ctx
}

// person is one signed-in person: a browser context of their own, cookies included.
type person struct {
	t    *testing.T
	name string
	ctx  context.Context
}

func (p *person) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %s: %v\n%s", p.name, what, err, p.page())
	}
}

// submit clicks a form's button and waits for the page the form's answer leads to (a
// page still showing the form would satisfy a wait for one of its elements at once); it
// returns that page's HTTP status.
func (p *person) submit(what, sel string) int64 {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatalf("%s: %s: %v\n%s", p.name, what, err, p.page())
	}
	return resp.Status
}

// page is where the person is and what the page says, for a failure's message.
func (p *person) page() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	where, _ := chromedp.Run(ctx, chromedp.Location())
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return fmt.Sprintf("at %s:\n%.2000s", where, body)
}

func (p *person) text(sel string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatalf("%s: the text of %s: %v\n%s", p.name, sel, err, p.page())
	}
	return s
}

// screenshot keeps a picture of what the window shows (1200x900) of the page for docs/desk.md, when COSCI_DESK_SCREENSHOTS
// names a folder (make desk-screenshots); otherwise it does nothing.
func (p *person) screenshot(name string) {
	p.t.Helper()
	dir := os.Getenv("COSCI_DESK_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		p.t.Fatal(err)
	}
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// signIn opens the desk, which sends the browser to the provider, where the person
// chooses themselves; the provider sends them back, signed in.
func signIn(t *testing.T, root context.Context, desk, name, subject string) *person {
	t.Helper()
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	p := &person{t: t, name: name, ctx: ctx}
	// The first action on a context opens its tab, which lives as long as that action's
	// context: run it without a timeout, so that later actions may have theirs.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("%s: cannot open a tab: %v", name, err)
	}
	p.do("sign in", chromedp.Navigate(desk+"/sessions"), chromedp.Click(chromedp.CSS("#as-"+subject)),
		chromedp.WaitVisible(chromedp.CSS(".who")))
	if who := p.text(".who"); !strings.Contains(who, name) {
		t.Fatalf("%s signed in as %q", name, who)
	}
	return p
}

func TestDeskInABrowser(t *testing.T) {
	storeDir := t.TempDir()
	// The worker offers the literature server's tools over the test library, for a
	// session whose searches wait for the scientist's approval.
	library, err := filepath.Abs(fixtureLibrary)
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(tools, fmt.Appendf(nil, "servers:\n  - name: literature\n    command: [%q, --library, %q, --index, %q]\n",
		literatureBinary, library, t.TempDir()), 0o644); err != nil {
		t.Fatal(err)
	}
	startWorker(t, storeDir, "--offline-latency", "150ms", "--tools", tools)

	idp := idptest.Start(
		idptest.User{Subject: "ada", Email: "ada@lab.example", Name: "Ada", Groups: []string{"lab"}},
		idptest.User{Subject: "bob", Email: "bob@lab.example", Name: "Bob", Groups: []string{"lab"}},
		idptest.User{Subject: "root", Email: "root@lab.example", Name: "Root", Groups: []string{"cosci-admins"}})
	defer idp.Close()

	deskBin := filepath.Join(buildDir, "desk")
	if out, err := goBuild(deskBin, "../desk"); err != nil {
		t.Fatalf("cannot build the desk: %v\n%s", err, out)
	}
	port := freePort(t)
	desk := fmt.Sprintf("http://127.0.0.1:%d", port)
	startWorkerBinary(t, deskBin, serverAddress, "", storeDir,
		[]string{"COSCI_DESK_KEY=" + strings.Repeat("5e", 32), "COSCI_DESK_CLIENT_SECRET=" + idp.ClientSecret},
		"--auth", "oidc", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--public-url", desk,
		"--oidc-issuer", idp.URL, "--oidc-client-id", idp.ClientID, "--scientist-group", "lab", "--admin-group", "cosci-admins")
	eventually(t, 30*time.Second, "the desk to answer", func() (bool, error) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	})

	root := browser(t)
	ada := signIn(t, root, desk, "ada@lab.example", "ada")

	// Ada starts a session: it is hers, whatever the form says.
	ada.do("start a session",
		chromedp.SetValue(chromedp.CSS(`textarea[name="goal"]`), "Find druggable mechanisms that slow tau propagation"),
		chromedp.SetValue(chromedp.CSS(`input[name="max_hypotheses"]`), "40"),
		chromedp.Click(chromedp.CSS("#start-session")),
		chromedp.WaitVisible(chromedp.CSS("#session-id")))
	id := ada.text("#session-id")
	t.Cleanup(func() { terminateIfRunning(t, id) })
	sessionURL := desk + "/s/" + id
	if owner := ada.text(".meta"); !strings.Contains(owner, "owner ada@lab.example") {
		t.Errorf("the session's page says %q; want ada as its owner", owner)
	}

	// Her live line moves while she watches, without a reload (Server-Sent Events; a
	// reload would end the poll with an error).
	first := ada.text("#live")
	ada.do("watch the live line move", chromedp.Poll[chromedp.Void](
		fmt.Sprintf(`document.querySelector("#live").textContent !== %q && document.querySelector("#live").textContent.includes("hypotheses")`, first),
		chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(45*time.Second)))
	t.Logf("ada's live line went from %q to %q", first, ada.text("#live"))
	if code := ada.submit("suspend it", "#suspend"); code != 200 {
		t.Fatalf("ada's suspend: %d\n%s", code, ada.page())
	}
	eventually(t, 30*time.Second, "the session to suspend", func() (bool, error) {
		if err := chromedp.Do(ada.ctx, chromedp.Navigate(sessionURL)); err != nil {
			return false, err
		}
		return strings.HasPrefix(ada.text("#state"), "suspended"), nil
	})

	// Bob, another scientist, is refused her session and its commands' page.
	bob := signIn(t, root, desk, "bob@lab.example", "bob")
	bob.do("open ada's session", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("#message")))
	if msg := bob.text("#message"); !strings.Contains(msg, "read access to session "+id) {
		t.Errorf("bob sees %q; want a refusal that says he lacks read access", msg)
	}

	// Ada shares it with him for reading.
	ada.do("share it for reading", chromedp.Navigate(sessionURL),
		chromedp.SetValue(chromedp.CSS(`input[name="who"]`), "bob@lab.example"),
		chromedp.SetValue(chromedp.CSS(`select[name="level"]`), "read"),
		chromedp.Click(chromedp.CSS("#share")), chromedp.WaitVisible(chromedp.CSS("#grants")))
	if g := ada.text("#grants"); !strings.Contains(g, "bob@lab.example: read (shared by ada@lab.example") {
		t.Errorf("grants %q", g)
	}

	// Bob reads it now, and has no command to send.
	bob.do("read ada's session", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("#read-only")))
	bob.screenshot("desk-reader.png")
	if n, err := chromedp.Run(bob.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#commands form").length`)); err != nil || n != 0 {
		t.Errorf("bob, a reader, is shown %d command forms (%v)", n, err)
	}
	// Were he to send one anyway (from the page, with his own CSRF token), it is refused.
	status, err := chromedp.Run(bob.ctx, chromedp.Evaluate[int](fmt.Sprintf(`(async () => {
		const f = new FormData(); f.set("csrf", document.querySelector("input[name=csrf]").value);
		const r = await fetch("/s/%s/command/resume", {method: "POST", body: new URLSearchParams(f)});
		return r.status; })()`, id), chromedp.EvalAwaitPromise))
	if err != nil || status != 403 {
		t.Errorf("bob's resume: %d (%v), want 403", status, err)
	}

	// Root, an admin, steers it: he resumes it.
	admin := signIn(t, root, desk, "root@lab.example", "root")
	admin.do("open ada's session", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("#resume")))
	if code := admin.submit("resume ada's session", "#resume"); code != 200 {
		t.Fatalf("root's resume: %d\n%s", code, admin.page())
	}

	// Ada watches it to the end, then opens a hypothesis and the report.
	ada.do("watch it end", chromedp.Navigate(sessionURL), chromedp.Poll[chromedp.Void](
		`document.querySelector("#live").textContent.startsWith("completed")`,
		chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(3*time.Minute)))
	ada.do("open the session", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("iframe.report")))
	ada.screenshot("desk-session.png")
	ada.do("open the list", chromedp.Navigate(desk+"/sessions"), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	ada.screenshot("desk-sessions.png")
	ada.do("open the best hypothesis", chromedp.Navigate(sessionURL),
		chromedp.Click(chromedp.CSS(`#ranking tbody a`)), chromedp.WaitVisible(chromedp.CSS("#statement")))
	if s := ada.text("#statement"); len(s) < 20 {
		t.Errorf("the hypothesis' statement reads %q", s)
	}
	ada.screenshot("desk-hypothesis.png")
	report, err := chromedp.Run(ada.ctx, chromedp.Evaluate[string](
		fmt.Sprintf(`fetch("/s/%s/files/report.md?download=1").then(r => r.text())`, id), chromedp.EvalAwaitPromise))
	if err != nil || !strings.Contains(report, "Find druggable mechanisms") {
		t.Errorf("the report ada downloads: %.200q (%v)", report, err)
	}

	// A session whose literature searches wait for her: she sees a call with its whole
	// arguments, and approves it.
	ada.do("start a grounded session", chromedp.Navigate(desk+"/sessions"),
		chromedp.SetValue(chromedp.CSS(`textarea[name="goal"]`), "Which mechanisms slow tau propagation in early Alzheimer's disease"),
		chromedp.SetValue(chromedp.CSS(`input[name="max_hypotheses"]`), "4"),
		chromedp.SetValue(chromedp.CSS(`input[name="tools"]`), "literature.search, literature.fetch"),
		chromedp.SetValue(chromedp.CSS(`input[name="approve_tools"]`), "literature.search"),
		chromedp.Click(chromedp.CSS("#start-session")), chromedp.WaitVisible(chromedp.CSS("#session-id")))
	grounded := ada.text("#session-id")
	t.Cleanup(func() { terminateIfRunning(t, grounded) })
	eventually(t, 2*time.Minute, "a tool call to wait for ada", func() (bool, error) {
		if err := chromedp.Do(ada.ctx, chromedp.Navigate(desk+"/s/"+grounded)); err != nil {
			return false, err
		}
		n, err := chromedp.Run(ada.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#waiting .approve").length`))
		return n > 0, err
	})
	call := ada.text("#waiting h3")
	if args := ada.text("#waiting pre.arguments"); !strings.Contains(args, "{") {
		t.Errorf("the waiting call %s shows arguments %q; want its whole JSON", call, args)
	}
	if code := ada.submit("approve "+call, "#waiting .approve"); code != 200 {
		t.Fatalf("ada's approval of %s: %d\n%s", call, code, ada.page())
	}
	callID, _, _ := strings.Cut(call, ":")
	eventually(t, time.Minute, call+" to be answered", func() (bool, error) {
		if err := chromedp.Do(ada.ctx, chromedp.Navigate(desk+"/s/"+grounded)); err != nil {
			return false, err
		}
		waiting, err := chromedp.Run(ada.ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#waiting h3")).map(h => h.textContent).join("|")`))
		return !strings.Contains("|"+waiting+"|", "|"+callID+":"), err
	})
}
