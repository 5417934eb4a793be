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
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cosci-dev/cosci/internal/auth/idptest"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
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

// zone sets the person's time zone, as their own machine's would be.
func (p *person) zone(id string) {
	p.t.Helper()
	p.do("live in "+id, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: id})
		return err
	}))
}

// axeScript is axe-core's script (npm axe-core, which make test installs), read once.
var axeScript = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "bin", "npm", "node_modules", "axe-core", "axe.min.js"))
	return string(b), err
})

// widths are the window widths each page is checked at: a laptop's and a phone's.
var widths = []int64{1280, 375}

// accessible checks the page the person is on with axe-core at each width, and fails the
// test on any violation it finds, with what and where. At a phone's width the page must
// not scroll sideways either.
func (p *person) accessible(what string) {
	p.t.Helper()
	script, err := axeScript()
	if err != nil {
		p.t.Fatalf("axe-core is not installed (make test installs it into bin/npm): %v", err)
	}
	defer p.do("a laptop's window again", chromedp.EmulateViewport(1200, 900))
	for _, w := range widths {
		p.do(fmt.Sprintf("%s at %d px", what, w), chromedp.EmulateViewport(w, 900))
		ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](script+";true")); err != nil {
			cancel()
			p.t.Fatalf("injecting axe-core into %s: %v", what, err)
		}
		found, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
			JSON.stringify(r.violations.map(v => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "))))`,
			chromedp.EvalAwaitPromise))
		wide, werr := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
		cancel()
		if err != nil || werr != nil {
			p.t.Fatalf("axe-core on %s at %d px: %v %v", what, w, err, werr)
		}
		var violations []string
		if err := json.Unmarshal([]byte(found), &violations); err != nil {
			p.t.Fatalf("axe-core's answer on %s: %q", what, found)
		}
		for _, v := range violations {
			p.t.Errorf("%s at %d px: %s", what, w, v)
		}
		if wide > 0 {
			p.t.Errorf("%s at %d px scrolls sideways by %d px", what, w, wide)
		}
	}
}

// phoneScreenshot keeps a picture of the page at a phone's width for docs/desk.md, when
// COSCI_DESK_SCREENSHOTS names a folder.
func (p *person) phoneScreenshot(name string) {
	p.t.Helper()
	if os.Getenv("COSCI_DESK_SCREENSHOTS") == "" {
		return
	}
	p.do("a phone's window", chromedp.EmulateViewport(375, 800))
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0); true`)); err != nil {
		p.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(os.Getenv("COSCI_DESK_SCREENSHOTS"), name), b, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.do("a laptop's window again", chromedp.EmulateViewport(1200, 900))
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
	ada.zone("Asia/Tokyo") // her times are read in her zone, whatever the machine's

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
	if msg := bob.text("#message"); !strings.Contains(msg, "No such session") || strings.Contains(bob.page(), "ada@lab.example") {
		t.Errorf("bob sees %q; want the answer to a session that does not exist, naming no one", msg)
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

	// Ada adds the lab's table at the desk; its schema says how each column was read.
	// Bob, who may only read, gets no upload form, and his upload is refused.
	labTable(t, ada, bob, sessionURL)

	// Ada talks with her session (it is suspended; it answers all the same): a question,
	// then a refinement that she confirms.
	ada.do("open her session", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("#ask")))
	ask := func(message string) {
		t.Helper()
		ada.do("write "+message, chromedp.SetValue(chromedp.CSS(`#ask textarea[name="message"]`), message))
		if code := ada.submit("ask "+message, "#ask-button"); code != 200 {
			t.Fatalf("ada's question %q: %d\n%s", message, code, ada.page())
		}
	}
	// Her first question from the keyboard alone: into the box, Tab to the button, Enter.
	// Bob, who reads the session, has its page open: the answer comes to it by itself.
	ada.do("type the question", chromedp.Focus(chromedp.CSS(`#ask textarea`)),
		chromedp.SendKeys(chromedp.CSS(`#ask textarea`), "Which hypothesis leads, and why?"), chromedp.KeyEvent("\t"))
	if focused, _ := chromedp.Run(ada.ctx, chromedp.Evaluate[string](`document.activeElement.id`)); focused != "ask-button" {
		t.Fatalf("Tab from the question goes to %q, not the Ask button", focused)
	}
	kctx, kcancel := context.WithTimeout(ada.ctx, 60*time.Second)
	resp, err := chromedp.RunResponse(kctx, chromedp.KeyEvent("\r"))
	kcancel()
	if err != nil || resp.Status != 200 {
		t.Fatalf("ada's question by the keyboard: %v %v\n%s", resp, err, ada.page())
	}
	answered := time.Now()
	bob.do("see the answer come, without a reload", chromedp.Poll[chromedp.Void](`document.querySelector("#m-0002 .prose") !== null`,
		chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(10*time.Second)))
	t.Logf("the answer reached bob's open page %s after ada's page had it", time.Since(answered).Round(time.Millisecond))
	turns, err := chromedp.Run(ada.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#conversation .turn")).map(d => d.innerText)`))
	if err != nil || len(turns) != 2 || !strings.Contains(turns[0], "Which hypothesis leads") || !strings.Contains(turns[1], "session") || len(ada.text("#m-0002 .text")) < 10 {
		t.Fatalf("after ada's question the conversation reads %q (%v); want her question and the session's answer", turns, err)
	}
	// The answer is prose, naming the leading hypothesis with a link to its page; her
	// question's time reads as people say it, in Tokyo's zone.
	links, err := chromedp.Run(ada.ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll("#m-0002 .prose p a[href^='/s/%s/h/h-']").length`, id)))
	if err != nil || links == 0 {
		t.Errorf("the answer links no hypothesis (%v):\n%s", err, ada.page())
	}
	when, err := chromedp.Run(ada.ctx, chromedp.Evaluate[[]string](`[document.querySelector("#m-0001 time").textContent, document.querySelector("#m-0001 time").title]`))
	if err != nil || len(when) != 2 || !regexp.MustCompile(`^(just now|\d+ min ago)$`).MatchString(when[0]) || !strings.Contains(when[1], "GMT+9") {
		t.Errorf("ada's question's time reads %q (%v); want 'just now' or 'N min ago', the exact time in Tokyo's zone on hover", when, err)
	}
	ask("Please focus on microglia.")
	proposal := ada.text(`#m-0004 .proposal`)
	if !strings.Contains(proposal, "refine-goal") || !strings.Contains(proposal, "microglia") || !strings.Contains(proposal, "proposed") {
		t.Fatalf("the answer to ada's refinement proposes %q; want a refine-goal toward microglia, open", proposal)
	}
	ada.screenshot("desk-conversation.png")
	if code := ada.submit("confirm the refinement", `#m-0004 .proposal button.confirm`); code != 200 {
		t.Fatalf("ada's confirmation: %d\n%s", code, ada.page())
	}
	if p := ada.text(`#m-0004 .proposal .status`); !strings.Contains(p, "confirmed by ada@lab.example") || strings.Contains(p, "not signed") {
		h, _ := chromedp.Run(ada.ctx, chromedp.Evaluate[string](`document.querySelector("#m-0004").outerHTML`))
		t.Errorf("the confirmed proposal says %q; want confirmed by ada, signed by the desk\n%s", p, h)
	}
	if c := ada.text("#conversation"); strings.Contains(c, "not signed") {
		t.Errorf("the conversation marks what the desk sent as not signed:\n%s", c)
	}
	// The page lists the refinement (the state query's, as the session now holds it).
	if refined, err := chromedp.Run(ada.ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`)); err != nil || !strings.Contains(refined, "(focus: microglia)") {
		t.Errorf("ada's page does not list the refinement (focus: microglia) (%v)\n%s", err, ada.page())
	}

	// Bob reads the conversation, but has no form to ask or confirm with, and the desk
	// refuses him both.
	bob.do("read the conversation", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("#m-0004")))
	if c := bob.text("#conversation"); !strings.Contains(c, "Please focus on microglia.") || !strings.Contains(c, "confirmed by ada@lab.example") {
		t.Errorf("bob reads the conversation as %q", c)
	}
	if n, err := chromedp.Run(bob.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#ask, #conversation button").length`)); err != nil || n != 0 {
		t.Errorf("bob, a reader, is shown %d ways to ask or confirm (%v)", n, err)
	}
	for _, field := range []string{`f.set("message", "focus on astrocytes")`, `f.set("confirm", "m-0004.1")`} {
		status, err := chromedp.Run(bob.ctx, chromedp.Evaluate[int](fmt.Sprintf(`(async () => {
			const f = new FormData(); f.set("csrf", document.querySelector("input[name=csrf]").value); %s;
			const r = await fetch("/s/%s/conversation", {method: "POST", body: new URLSearchParams(f)});
			return r.status; })()`, field, id), chromedp.EvalAwaitPromise))
		if err != nil || status != 403 {
			t.Errorf("bob's %s: %d (%v), want 403", field, status, err)
		}
	}

	// Root, an admin, steers it: he resumes it.
	admin := signIn(t, root, desk, "root@lab.example", "root")
	admin.do("open ada's session", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("#resume")))
	if code := admin.submit("resume ada's session", "#resume"); code != 200 {
		t.Fatalf("root's resume: %d\n%s", code, admin.page())
	}

	// The refinement takes effect: the session's history records ada's refine-goal, from
	// the conversation, and a generation turn after it carries the focus in its prompt.
	refinedIn(t, id, storeDir, "microglia")

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
	ada.accessible("the hypothesis page")
	ada.do("open the tree", chromedp.Navigate(sessionURL+"/tree"), chromedp.WaitVisible(chromedp.CSS(".tree")))
	ada.accessible("the tree page")
	ada.do("go back to the session", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("#ranking")))
	report, err := chromedp.Run(ada.ctx, chromedp.Evaluate[string](
		fmt.Sprintf(`fetch("/s/%s/files/report.md?download=1").then(r => r.text())`, id), chromedp.EvalAwaitPromise))
	if err != nil || !strings.Contains(report, "Find druggable mechanisms") {
		t.Errorf("the report ada downloads: %.200q (%v)", report, err)
	}

	// Ada asks to be told when a session starts waiting for her (the page's Notification
	// API stood in for by a recorder: the test checks what the desk's script does, not how
	// the browser shows a notification).
	ada.do("record notifications", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
			window.__notes = [];
			window.Notification = function (title, opts) { window.__notes.push(title + ": " + (opts && opts.body)); };
			window.Notification.permission = "granted";
			window.Notification.requestPermission = function () { return Promise.resolve("granted"); };`})
		return err
	}), chromedp.Navigate(desk+"/sessions"), chromedp.WaitVisible(chromedp.CSS("#notify")), chromedp.Click(chromedp.CSS("#notify")),
		chromedp.Poll[chromedp.Void](`localStorage.getItem("cosci-notify") === "on" && document.querySelector("#notify").hidden`, chromedp.WithPollingTimeout(10*time.Second)))

	// A session whose literature fetches wait for her: she sees the calls come with their
	// whole arguments, on the page she has open, and answers them.
	ada.do("start a grounded session", chromedp.Navigate(desk+"/sessions"),
		chromedp.SetValue(chromedp.CSS(`textarea[name="goal"]`), "Which mechanisms slow tau propagation in early Alzheimer's disease"),
		chromedp.SetValue(chromedp.CSS(`input[name="max_hypotheses"]`), "10"),
		chromedp.SetValue(chromedp.CSS(`input[name="tools"]`), "literature.search, literature.fetch"),
		chromedp.SetValue(chromedp.CSS(`input[name="approve_tools"]`), "literature.fetch"),
		chromedp.Click(chromedp.CSS("#start-session")), chromedp.WaitVisible(chromedp.CSS("#session-id")))
	grounded := ada.text("#session-id")
	t.Cleanup(func() { terminateIfRunning(t, grounded) })
	groundedURL := desk + "/s/" + grounded
	waitForCall := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ada.ctx, 3*time.Minute)
		defer cancel()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("#waiting .approve").length > 0`, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(3*time.Minute))); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, ada.page())
		}
	}
	waitForCall("see a call wait, without a reload")
	if args := ada.text("#waiting pre.arguments"); !strings.Contains(args, "{") {
		t.Errorf("the waiting call shows arguments %q; want its whole JSON", args)
	}
	// Her page tells her, as the call starts waiting (its script asks every 15 s).
	nctx, ncancel := context.WithTimeout(ada.ctx, 90*time.Second)
	_, err = chromedp.Run(nctx, chromedp.Poll[bool](`window.__notes.length > 0`, chromedp.WithPollingInterval(500*time.Millisecond)))
	ncancel()
	if err != nil {
		qctx, qcancel := context.WithTimeout(ada.ctx, 10*time.Second)
		needs, _ := chromedp.Run(qctx, chromedp.Evaluate[string](`fetch("/needs").then(r => r.text())`, chromedp.EvalAwaitPromise))
		qcancel()
		t.Fatalf("ada was not told the session waits (%v); /needs says %s", err, needs)
	}
	if notes, _ := chromedp.Run(ada.ctx, chromedp.Evaluate[[]string](`window.__notes`)); len(notes) == 0 || !strings.Contains(notes[0], grounded) || !strings.Contains(notes[0], "to approve") {
		t.Errorf("the notification says %q", notes)
	}
	if title, _ := chromedp.Run(ada.ctx, chromedp.Title()); !strings.HasPrefix(title, "(1) ") {
		t.Errorf("the session page's title is %q; want it to count the session that waits", title)
	}

	// Her sessions say which waits for her, and why.
	ada.do("open the list", chromedp.Navigate(desk+"/sessions"), chromedp.WaitVisible(chromedp.CSS(".needs")))
	if title, _ := chromedp.Run(ada.ctx, chromedp.Title()); !strings.HasPrefix(title, "(1) Sessions") {
		t.Errorf("the sessions page's title is %q; want (1) first", title)
	}
	if why := ada.text(".needs-you .needs"); !strings.Contains(why, "to approve") {
		t.Errorf("the waiting session is marked %q", why)
	}
	ada.accessible("the sessions page")
	ada.phoneScreenshot("desk-phone-sessions.png")

	// She asks it about the literature: it searches (a fetch, which would wait for her, is
	// not made in a conversation), and its answer's citations show what the check found.
	ada.do("open the grounded session", chromedp.Navigate(groundedURL), chromedp.WaitVisible(chromedp.CSS("#ask")))
	ask("What does the literature say about microglia?")
	waitForCall("see the calls wait")
	ada.accessible("a session page with calls waiting and a conversation")
	ada.phoneScreenshot("desk-phone-session.png")

	// She approves the calls that wait, but one, together; then she trusts the tool for
	// this session, which approves that one too, and undoes it.
	wctx, wcancel := context.WithTimeout(ada.ctx, 3*time.Minute)
	_, err = chromedp.Run(wctx, chromedp.Poll[bool](`document.querySelectorAll("#waiting input[name=calls]").length >= 2`,
		chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(3*time.Minute)))
	wcancel()
	if err != nil {
		t.Fatalf("two calls to wait: %v\n%s", err, ada.page())
	}
	n, err := chromedp.Run(ada.ctx, chromedp.Evaluate[int](`const boxes = Array.from(document.querySelectorAll("#waiting input[name=calls]"));
		boxes.slice(0, boxes.length - 1).forEach(c => c.checked = true); document.querySelectorAll("#waiting input[name=calls]:checked").length`))
	if err != nil || n == 0 {
		t.Fatalf("no call to select (%v)", err)
	}
	if code := ada.submit("approve the selected calls", "#approve-selected"); code != 200 {
		t.Fatalf("ada's approval of %d calls: %d\n%s", n, code, ada.page())
	}
	t.Logf("ada approved %d calls at once", n)
	waitForCall("see the call she left wait still")
	if code := ada.submit("trust the tool", "#waiting button.trust"); code != 200 {
		t.Fatalf("ada's trust: %d\n%s", code, ada.page())
	}
	if tr := ada.text("#trusted"); !strings.Contains(tr, "literature.fetch") || !strings.Contains(tr, "ada@lab.example") {
		t.Errorf("the trusted tools read %q", tr)
	}
	if code := ada.submit("undo the trust", "#trusted button.untrust"); code != 200 {
		t.Fatalf("ada's undo: %d\n%s", code, ada.page())
	}
	if n, _ := chromedp.Run(ada.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#trusted").length`)); n != 0 {
		t.Error("the tool is still trusted after the undo")
	}
	cited, err := chromedp.Run(ada.ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#conversation details.cited")).map(d => d.textContent).join("|")`))
	if err != nil || !strings.Contains(cited, "cited") || !regexp.MustCompile(`\b(verified|flagged)`).MatchString(cited) {
		t.Errorf("the answer about the literature shows its citations as %q (%v); want them with their verdicts\n%s", cited, err, ada.page())
	}
	if os.Getenv("COSCI_DESK_SCREENSHOTS") != "" {
		if _, err := chromedp.Run(ada.ctx, chromedp.Evaluate[bool](`document.querySelectorAll("details.cited").forEach(d => d.open = true);
			document.querySelector("#conversation details.cited").closest(".turn").scrollIntoView(); true`)); err != nil {
			t.Fatal(err)
		}
		ada.screenshot("desk-cited.png")
	}
}

// refinedIn waits for session id's history to record a refine-goal confirmed in the
// conversation by ada, then for a generation turn after it whose prompt, in the store,
// carries focus.
func refinedIn(t *testing.T, id, storeDir, focus string) {
	t.Helper()
	st, err := store.Open(t.Context(), storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eventually(t, 2*time.Minute, "a generation turn after the refinement, with its focus", func() (bool, error) {
		total := mustQuery[workflows.HistoryView](t, id, workflows.QueryHistory, workflows.Page{Limit: 1}).Total
		h := mustQuery[workflows.HistoryView](t, id, workflows.QueryHistory, workflows.Page{Offset: max(0, total-workflows.MaxPageLimit), Limit: workflows.MaxPageLimit})
		refined := false
		var without []string // generation turns after it whose prompt lacks the focus
		for _, e := range h.Events {
			switch {
			case e.Kind == session.EventCommand && e.Command == workflows.RefineGoal:
				if e.Via != "conversation" || e.By != "ada@lab.example" || e.Signed == "" || e.Accepted == nil || !*e.Accepted {
					t.Fatalf("the history records the refinement as %+v; want it accepted, from the conversation, by ada, with the desk's signature", e)
				}
				refined = true
			case !refined && e.Kind == session.EventTurn && strings.HasPrefix(e.Turn, "generate-"):
				// Before it, the focus is in no generation prompt: the check below means something.
				if turn, found, err := st.Turn(t.Context(), id, e.Turn); err == nil && found && strings.Contains(turn.Prompt, focus) {
					t.Fatalf("generation turn %s, before the refinement, already has %q in its prompt", e.Turn, focus)
				}
			case refined && e.Kind == session.EventTurn && strings.HasPrefix(e.Turn, "generate-"):
				turn, found, err := st.Turn(t.Context(), id, e.Turn)
				if err != nil || !found {
					continue // not stored yet
				}
				if strings.Contains(turn.Prompt, focus) {
					t.Logf("generation turn %s, after the refinement, asks for %s", e.Turn, focus)
					return true, nil
				}
				without = append(without, e.Turn+": "+research.Shorten(turn.Prompt, 600))
			}
		}
		if !refined {
			return false, fmt.Errorf("no refine-goal in the latest %d events of the history", len(h.Events))
		}
		return false, fmt.Errorf("the generation turns after the refinement lack %q: %q", focus, without)
	})
}

// labTable has ada upload a small table (a German export: semicolons, decimal commas) on
// the session's lab page and read its schema there; bob, a reader, is refused the upload.
func labTable(t *testing.T, ada, bob *person, sessionURL string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "Plate reads.csv")
	if err := os.WriteFile(file, []byte("well;dose (mg);signal\nA1;0;1,20\nA2;10;1,85\nA3;20;2,41\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ada.do("open the lab", chromedp.Navigate(sessionURL+"/lab"), chromedp.WaitVisible(chromedp.CSS("#upload")),
		chromedp.SetUploadFiles(chromedp.CSS(`#upload input[type="file"]`), []string{file}))
	if code := ada.submit("upload the table", "#upload-button"); code != 200 {
		t.Fatalf("ada's upload: %d\n%s", code, ada.page())
	}
	shown := ada.text("#datasets")
	for _, want := range []string{"Plate_reads", "3 rows, 3 columns", "dose", "mg", "signal", "DOUBLE"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the lab page shows the table as %q; it lacks %q", shown, want)
		}
	}
	ada.accessible("the lab page")
	bob.do("read the lab", chromedp.Navigate(sessionURL+"/lab"), chromedp.WaitVisible(chromedp.CSS("#datasets")))
	if n, err := chromedp.Run(bob.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#upload, #plan").length`)); err != nil || n != 0 {
		t.Errorf("bob, a reader, is shown %d lab forms (%v)", n, err)
	}
	status, err := chromedp.Run(bob.ctx, chromedp.Evaluate[int](`(async () => {
		const f = new FormData(); f.set("csrf", document.querySelector("input[name=csrf]").value);
		f.set("file", new Blob(["a\n1\n"]), "t.csv");
		const r = await fetch(location.pathname.replace(/lab$/, "data"), {method: "POST", body: f});
		return r.status; })()`, chromedp.EvalAwaitPromise))
	if err != nil || status != 403 {
		t.Errorf("bob's upload: %d (%v), want 403", status, err)
	}
	bob.do("go back to the session", chromedp.Navigate(sessionURL), chromedp.WaitVisible(chromedp.CSS("#read-only")))
}
