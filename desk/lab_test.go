package main

import (
	"bytes"
	"context"
	"errors"
	"html"
	"maps"
	"mime/multipart"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/stats"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/vouch"
	"github.com/cosci-dev/cosci/workflows"
)

// sentLab is one of the lab's updates as the session would get it.
type sentLab struct {
	id, name, update string
	req              any
}

func (f *fake) Experiments(_ context.Context, id string) (workflows.ExperimentsView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.status[id]; !ok {
		return workflows.ExperimentsView{}, errNoSession
	}
	return f.lab[id], nil
}

// Lab records the update; an added table joins the session's lab, as the workflow's
// add-dataset does.
func (f *fake) Lab(_ context.Context, id, name, update string, req any) (workflows.LabAnswer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.labSent = append(f.labSent, sentLab{id, name, update, req})
	if why := f.labRefuses[name]; why != "" {
		return workflows.LabAnswer{}, &refused{why}
	}
	if r, ok := req.(workflows.DatasetRequest); ok {
		d := workflows.LabDataset{Table: r.Table, Digest: r.Digest, Rows: r.Rows, Columns: r.Columns, Update: update}
		v := f.lab[id]
		v.Datasets = append(v.Datasets, d)
		f.lab[id] = v
		return workflows.LabAnswer{Dataset: &d}, nil
	}
	return workflows.LabAnswer{}, nil
}

func (f *fake) sentLab() []sentLab {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sentLab(nil), f.labSent...)
}

// upload sends a multipart form as who, with who's CSRF token unless fields has one, and
// the file (none when name is "").
func (td *testDesk) upload(t *testing.T, who, target string, fields map[string]string, name string, content []byte) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if _, ok := fields["csrf"]; !ok {
		_ = mw.WriteField("csrf", td.csrf(t, who))
	}
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if name != "" {
		fw, err := mw.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(content)
	}
	_ = mw.Close()
	r := httptest.NewRequestWithContext(t.Context(), "POST", target, &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("X-Forwarded-Email", who)
	for _, c := range td.cookies[who] {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	td.h.ServeHTTP(w, r)
	if set := w.Result().Cookies(); len(set) > 0 {
		td.cookies[who] = set
	}
	return w.Code, w.Body.String()
}

// plates is a small table as a plate reader exports it.
var plates = []byte("well,dose (mg),signal\nA1,0,1.20\nA2,10,1.85\nA3,20,2.41\n")

// labDesk is a desk with session s-1 of ada, shared with bob for reading, with one
// hypothesis in the store.
func labDesk(t testing.TB) *testDesk { return labDeskFor(t, access.Read) }

// labDeskFor is labDesk with bob's grant at level.
func labDeskFor(t testing.TB, level access.Level) *testDesk {
	t.Helper()
	td := newTestDesk(t)
	td.fake.add("s-1", "ada@lab", "tau propagation", session.Entry{ID: "h-0001", Title: "Microglia", Elo: 1250})
	rec := access.Record{SessionID: "s-1", Owner: "ada@lab"}
	if level != "" {
		rec.Grants = []access.Grant{{Who: "bob@lab", Level: level, By: "ada@lab", At: "2026-11-27T08:00:00Z"}}
	}
	if err := td.st.PutAccess(t.Context(), "s-1", rec); err != nil {
		t.Fatal(err)
	}
	if err := td.st.PutHypothesis(t.Context(), "s-1", research.Hypothesis{ID: "h-0001", Title: "Microglia", Statement: "s"}); err != nil {
		t.Fatal(err)
	}
	return td
}

// TestLabWhoMayDoWhat: only people who may steer the session upload a table or act on its
// experiments; a reader reads the lab without its forms, and is refused (403) every act,
// with nothing stored and nothing sent to the session.
func TestLabWhoMayDoWhat(t *testing.T) {
	forms := []struct {
		act  string
		form url.Values
		sent string // the update the session gets
	}{
		{"plan", url.Values{"hypothesis": {"h-0001"}, "prediction": {"more signal with dose"}}, workflows.PlanExperiment},
		{"confirm", url.Values{"experiment": {"x-0001"}, "digest": {"sha256:ab"}}, workflows.ConfirmExperiment},
		{"result", url.Values{"experiment": {"x-0001"}, "data": {strings.Repeat("a", 64)}}, workflows.ExperimentResult},
		{"withdraw-result", url.Values{"experiment": {"x-0001"}, "reason": {"failed assay"}}, workflows.WithdrawResult},
		{"withdraw-experiment", url.Values{"experiment": {"x-0001"}, "reason": {"no funds"}}, workflows.WithdrawExperiment},
	}
	people := []struct {
		who   string
		grant access.Level // bob's
		code  int
		steer bool
	}{{"ada@lab", access.Read, 303, true}, {"root@lab", access.Read, 303, true}, {"bob@lab", access.Steer, 303, true}, {"bob@lab", access.Read, 403, false}}
	for _, p := range people {
		td := labDeskFor(t, p.grant)
		code, _ := td.upload(t, p.who, "/s/s-1/data", nil, "plates.csv", plates)
		stored, err := td.st.Datasets(t.Context(), "s-1")
		if err != nil {
			t.Fatal(err)
		}
		if code != p.code || (len(stored) == 1) != p.steer {
			t.Errorf("%s uploads: %d with %d tables stored, want %d (steer: %v)", p.who, code, len(stored), p.code, p.steer)
		}
		for _, f := range forms {
			before := len(td.fake.sentLab())
			code, body := td.do(t, p.who, "POST", "/s/s-1/lab/"+f.act, maps.Clone(f.form)) // do sets the person's CSRF token in it
			sent := td.fake.sentLab()
			switch {
			case code != p.code:
				t.Errorf("%s %s: %d, want %d\n%s", p.who, f.act, code, p.code, body[strings.Index(body, "<main"):])
			case p.steer && (len(sent) != before+1 || sent[before].name != f.sent):
				t.Errorf("%s %s: the session got %v, want %s", p.who, f.act, sent[before:], f.sent)
			case !p.steer && len(sent) != before:
				t.Errorf("%s %s: refused, yet the session got %v", p.who, f.act, sent[before:])
			}
		}
		if !p.steer {
			code, body := td.do(t, p.who, "GET", "/s/s-1/lab", nil)
			if code != 200 || strings.Contains(body, `action="/s/s-1/data"`) || strings.Contains(body, `action="/s/s-1/lab/plan"`) {
				t.Errorf("the reader's lab page: %d, forms shown: %v", code, strings.Contains(body, "/lab/plan"))
			}
		}
	}
}

// TestLabOfAnotherIsNotFound: to a scientist the session is not shared with, its lab, its
// upload and its forms answer as a session that does not exist.
func TestLabOfAnotherIsNotFound(t *testing.T) {
	td := labDeskFor(t, "")
	td.fake.lab["s-1"] = labView()
	if code, body := td.do(t, "bob@lab", "GET", "/s/s-1/lab", nil); code != 404 || strings.Contains(body, "sha256:plan1") {
		t.Errorf("bob reads ada's lab: %d", code)
	}
	if code, _ := td.upload(t, "bob@lab", "/s/s-1/data", nil, "plates.csv", plates); code != 404 {
		t.Errorf("bob uploads to ada's session: %d, want 404", code)
	}
	if code, _ := td.do(t, "bob@lab", "POST", "/s/s-1/lab/plan", url.Values{"hypothesis": {"h-0001"}}); code != 404 {
		t.Errorf("bob plans in ada's session: %d, want 404", code)
	}
	if stored, _ := td.st.Datasets(t.Context(), "s-1"); len(stored) != 0 || len(td.fake.sentLab()) != 0 {
		t.Errorf("%d tables stored, %d updates sent", len(stored), len(td.fake.sentLab()))
	}
}

// TestUploadRefusals: a file over the cap (in its part, or a body over the cap) and a file
// that does not parse are refused with a message that says why, and nothing is stored or
// announced; a table stored before stays, its bytes intact.
func TestUploadRefusals(t *testing.T) {
	latin1 := []byte("name,city\nJ\xfcrgen,M\xfcnchen\n")
	_, want := dataset.Read(latin1, dataset.Options{}) // the reader's own reason
	var bad *dataset.Refused
	if !errors.As(want, &bad) {
		t.Fatalf("the Latin-1 file is not refused by the reader: %v", want)
	}
	tests := []struct {
		name    string
		file    string
		content []byte
		fields  map[string]string
		code    int
		says    string
	}{
		{"a file a little over the cap", "big.csv", append([]byte("a\n"), bytes.Repeat([]byte("1\n"), 520)...), nil, 413, "big.csv is 1042 bytes: the desk takes files of at most 1024 bytes (--max-upload-mb)"},
		{"a body far over the cap", "huge.csv", append([]byte("a\n"), bytes.Repeat([]byte("1\n"), 80<<10)...), nil, 413, "The upload is too large: the desk takes files of at most 1024 bytes (--max-upload-mb)"},
		{"a file in Latin-1", "umlauts.csv", latin1, nil, 422, strings.TrimPrefix(bad.Error(), "dataset: ")},
		{"ragged rows", "ragged.csv", []byte("a,b\n1,2\n3\n"), nil, 422, "cannot be read as a table"},
		{"no file", "", nil, nil, 422, "No file"},
		{"a table name that is no name", "ok.csv", []byte("a\n1\n"), map[string]string{"table": "x; DROP"}, 422, "not a name analyses can use"},
	}
	for _, tt := range tests {
		td := labDesk(t)
		td.maxUpload = 1 << 10
		if code, body := td.upload(t, "ada@lab", "/s/s-1/data", nil, "first.csv", plates); code != 303 {
			t.Fatalf("the first upload: %d\n%.400s", code, body)
		}
		first, _ := td.st.Datasets(t.Context(), "s-1")
		code, body := td.upload(t, "ada@lab", "/s/s-1/data", tt.fields, tt.file, tt.content)
		if code != tt.code || !strings.Contains(body, htmlEscape(tt.says)) {
			t.Errorf("%s: %d, want %d saying %q\n%.600s", tt.name, code, tt.code, tt.says, body)
		}
		if tt.code != 303 && !strings.Contains(body, "Nothing was stored") && tt.name != "no file" {
			t.Errorf("%s: the refusal does not say nothing was stored", tt.name)
		}
		after, err := td.st.Datasets(t.Context(), "s-1")
		if err != nil || len(after) != 1 {
			t.Errorf("%s: %d tables stored after the refusal (%v), want the first alone", tt.name, len(after), err)
			continue
		}
		if b, err := td.st.DatasetBytes(t.Context(), "s-1", first[0].Digest); err != nil || !bytes.Equal(b, plates) {
			t.Errorf("%s: the table stored before is lost: %v", tt.name, err)
		}
		if n := len(td.fake.sentLab()); n != 1 {
			t.Errorf("%s: %d updates sent, want the first table's add-dataset alone", tt.name, n)
		}
	}
}

// TestUploadNeedsItsForm: an upload without the form's CSRF token, or sent as an encoded
// form, is refused and stores nothing.
func TestUploadNeedsItsForm(t *testing.T) {
	td := labDesk(t)
	if code, _ := td.upload(t, "ada@lab", "/s/s-1/data", map[string]string{"csrf": "forged"}, "plates.csv", plates); code != 403 {
		t.Errorf("an upload with a forged CSRF token: %d, want 403", code)
	}
	if code, _ := td.do(t, "ada@lab", "POST", "/s/s-1/data", url.Values{"file": {string(plates)}}); code != 415 {
		t.Errorf("a table sent as an encoded form: %d, want 415", code)
	}
	if stored, _ := td.st.Datasets(t.Context(), "s-1"); len(stored) != 0 || len(td.fake.sentLab()) != 0 {
		t.Errorf("refused uploads stored %d tables and sent %d updates", len(stored), len(td.fake.sentLab()))
	}
}

// hiddenInput is a form's hidden field as the page carries it.
var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// TestLabActsAreSigned: every act the desk sends to the lab (the table an upload adds, a
// plan, a confirmation, a result uploaded with it, withdrawals) carries the person and a
// signature that verifies for the act as the session records it: the update's name, the
// digest the session makes of the request (workflows.LabDigest), and the update id sent.
func TestLabActsAreSigned(t *testing.T) {
	td := labDeskFor(t, access.Steer)
	td.fake.lab["s-1"] = workflows.ExperimentsView{Experiments: []workflows.LabExperiment{{Experiment: experiment.Experiment{ID: "x-0001", Hypothesis: "h-0001", State: experiment.Waiting}}}}
	now := td.now()
	td.upload(t, "bob@lab", "/s/s-1/data", map[string]string{"table": "plates"}, "plates.csv", plates)
	td.do(t, "bob@lab", "POST", "/s/s-1/lab/plan", url.Values{"hypothesis": {"h-0001"}, "prediction": {"more signal"}})
	td.do(t, "bob@lab", "POST", "/s/s-1/lab/confirm", url.Values{"experiment": {"x-0001"}, "digest": {"sha256:ab"}})
	td.upload(t, "bob@lab", "/s/s-1/lab/result", map[string]string{"experiment": "x-0001"}, "result.csv", []byte("dose,signal\n1,2\n"))
	td.do(t, "bob@lab", "POST", "/s/s-1/lab/withdraw-result", url.Values{"experiment": {"x-0001"}, "reason": {"failed assay"}})
	sent := td.fake.sentLab()
	var names []string
	updates := map[string]bool{}
	for _, s := range sent {
		names = append(names, s.name)
		by, sig := actor(s.req)
		act := vouch.Act{Session: "s-1", Kind: s.name, By: by, Payload: workflows.LabDigest(s.name, s.req), Update: s.update}
		if by != "bob@lab" || !td.key.Acts().Verify(act, sig, now) {
			t.Errorf("%s: sent by %q with a signature that does not verify for it", s.name, by)
		}
		edited := act
		edited.Payload = workflows.LabDigest(s.name, struct{}{})
		if td.key.Acts().Verify(edited, sig, now) {
			t.Errorf("%s: the signature verifies for another payload too", s.name)
		}
		updates[s.update] = true
	}
	want := "add-dataset,plan-experiment,confirm-experiment,add-dataset,experiment-result,withdraw-result"
	if strings.Join(names, ",") != want || len(updates) != len(sent) {
		t.Errorf("sent %v as %d updates, want %s, each its own update", names, len(updates), want)
	}
	if r, ok := sent[4].req.(workflows.ResultRequest); !ok || r.Data != sent[3].req.(workflows.DatasetRequest).Digest {
		t.Errorf("the result does not name the table uploaded with it: %+v", sent[4].req)
	}
}

// actor is who a lab request names, and its signature.
func actor(req any) (string, string) {
	switch r := req.(type) {
	case workflows.DatasetRequest:
		return r.By, r.BySig
	case workflows.PlanRequest:
		return r.By, r.BySig
	case workflows.ConfirmExperimentRequest:
		return r.By, r.BySig
	case workflows.ResultRequest:
		return r.By, r.BySig
	case workflows.WithdrawRequest:
		return r.By, r.BySig
	}
	return "", ""
}

const evilText = `<script>alert("x")</script> & 'quoted'`

// labView is a session's lab with an experiment in each state a page tells apart.
func labView() workflows.ExperimentsView {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	plan := func(text string) experiment.Plan {
		return experiment.Plan{Hypothesis: "h-0001", Prediction: experiment.Prediction{Text: text, Direction: "increase"},
			Analysis: experiment.Analysis{Query: "SELECT dose, signal FROM plates", Test: "pearson", Columns: []string{"dose", "signal"}},
			Expected: []experiment.Table{{Name: "plates", Columns: []string{"dose", "signal"}}}}
	}
	run := func(id, data string) experiment.Run {
		return experiment.Run{ID: id, Plan: "sha256:plan1", Data: data, Ran: experiment.Mark{Event: 40, Time: at}}
	}
	supported := &experiment.Result{Experiment: "x-0001", Hypothesis: "h-0001", Data: "d1d1d1d1d1d1d1d1", Arrived: experiment.Mark{Event: 30, Time: at},
		Outcome: experiment.Outcome{Test: "pearson", Effect: 0.62, Low: 0.31, High: 0.81, P: 0.0004, N: 48}, Standing: session.Supported}
	refuted := &experiment.Result{Experiment: "x-0002", Hypothesis: "h-0002", Data: "d2d2d2d2d2d2d2d2", Arrived: experiment.Mark{Event: 31, Time: at},
		Outcome: experiment.Outcome{Effect: -0.4, Low: -0.6, High: -0.2, P: 0.001, N: 40}, Standing: session.Refuted}
	return workflows.ExperimentsView{Why: "waiting for the lab: 1 experiment, since 20 Nov 2026",
		Datasets: []workflows.LabDataset{{Table: "plates_week3", Digest: supported.Data, Rows: 48, Columns: 2}}, Experiments: []workflows.LabExperiment{
			{Experiment: experiment.Experiment{ID: "x-0001", Hypothesis: "h-0001", State: experiment.Analysed, Plan: "sha256:plan1",
				Confirmed: experiment.Mark{Event: 12, Time: at}, Result: supported},
				Spec: plan(evilText), ConfirmUpdate: "desk-c0ffee", ConfirmedAt: workflows.Where{Run: "run-1", Event: 12},
				Runs:   []experiment.Run{run("x-0001-run-1", supported.Data)},
				Labels: []experiment.Label{{Run: run("x-0001-run-1", supported.Data), Kind: experiment.PreRegistered, Why: "the registered plan, first run on its data"}},
				Change: &experiment.Change{Experiment: "x-0001", Hypothesis: "h-0001", After: session.Supported, Moves: []experiment.Move{{Hypothesis: "h-0001", From: 3, To: 1}}}},
			{Experiment: experiment.Experiment{ID: "x-0002", Hypothesis: "h-0002", State: experiment.Analysed, Plan: "sha256:plan2", Result: refuted},
				Spec: plan("less signal"), Labels: []experiment.Label{
					{Run: run("x-0002-run-1", refuted.Data), Kind: experiment.PreRegistered, Why: "the registered plan"},
					{Run: run("x-0002-run-2", refuted.Data), Kind: experiment.Exploratory, Why: "a second run on the same data"}}},
			{Experiment: experiment.Experiment{ID: "x-0003", Hypothesis: "h-0001", State: experiment.Waiting, Plan: "sha256:plan3", WaitingSince: at,
				Withdrawn: []experiment.Result{{Data: "d3d3d3d3d3d3d3d3", Standing: session.Refuted, Withdrawal: "failed assay: " + evilText}}},
				Spec: plan("third")},
			{Experiment: experiment.Experiment{ID: "x-0004", Hypothesis: "h-0001", State: experiment.Planned, Plan: "sha256:plan4"}, Spec: plan("fourth")},
			{Experiment: experiment.Experiment{ID: "x-0005", Hypothesis: "h-0002", State: experiment.Withdrawn, Plan: "sha256:plan5", Reason: "no funds left"}, Spec: plan("fifth")},
		}}
}

// TestLabPageShowsExperiments: the lab's page shows each experiment's state, prediction,
// plan with its digest and the history event that fixed it, the result with its effect,
// CI and p, its standing, the analysis it rests on, exploratory runs labelled, what a
// result changed, and withdrawals with their reasons; everything a model or a person
// wrote escaped. A hypothesis' page shows its own tests alone.
func TestLabPageShowsExperiments(t *testing.T) {
	td := labDesk(t)
	td.fake.lab["s-1"] = labView()
	code, body := td.do(t, "ada@lab", "GET", "/s/s-1/lab", nil)
	if code != 200 {
		t.Fatalf("the lab page: %d\n%.500s", code, body)
	}
	escaped := htmlEscape(evilText)
	for _, want := range []string{
		"waiting for the lab: 1 experiment",
		`<span class="state">waiting for the lab</span>`, // x-0003
		escaped, // the prediction
		"sha256:plan1", "history event 12 of run <code>run-1</code>, update <code>desk-c0ffee</code>",
		"temporal workflow show --workflow-id s-1 --run-id run-1",
		"table plates_week3 (<code>d1d1d1d1d1d1</code>) arrived",
		`<strong class="standing standing-supported">supported</strong>`, "effect 0.62, 95% CI [0.31, 0.81], p 0.0004, n 48",
		`<strong class="standing standing-refuted">refuted</strong>`, "effect -0.4, 95% CI [-0.6, -0.2], p 0.001, n 40",
		`<code class="analysis">analysis:x-0001-run-1</code>`,
		`<a href="/s/s-1/analysis/x-0002-run-2"><code>analysis:x-0002-run-2</code></a> <span class="tag kind-exploratory">exploratory</span> a second run on the same data`,
		"h-0001: untested → supported; h-0001 #3 → #1",
		"failed assay: " + escaped, "no funds left",
		`name="digest" value="sha256:plan4"`, // the confirm form sends the digest shown
		// x-0003's result form uploads under the table the plan's query reads, which the
		// session requires.
		`<select name="table"><option>plates</option></select>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the lab page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("the lab page shows a prediction's script unescaped")
	}
	_, hyp := td.do(t, "ada@lab", "GET", "/s/s-1/h/h-0001", nil)
	for _, want := range []string{`id="x-0001"`, `id="x-0003"`, `id="x-0004"`, escaped, `action="/s/s-1/lab/plan"`, `name="hypothesis" value="h-0001"`} {
		if !strings.Contains(hyp, want) {
			t.Errorf("h-0001's page lacks %q", want)
		}
	}
	if strings.Contains(hyp, `id="x-0002"`) || strings.Contains(hyp, "<script>alert") {
		t.Error("h-0001's page shows another hypothesis' test, or a script unescaped")
	}
}

// TestConfirmSendsTheDigestShown: the confirm form sends the plan's digest the page
// shows, which the workflow compares with the plan it holds.
func TestConfirmSendsTheDigestShown(t *testing.T) {
	td := labDesk(t)
	td.fake.lab["s-1"] = labView()
	_, body := td.do(t, "ada@lab", "GET", "/s/s-1/lab", nil)
	i := strings.Index(body, `action="/s/s-1/lab/confirm"`)
	if i < 0 {
		t.Fatal("no confirm form")
	}
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(body[i:i+strings.Index(body[i:], "</form>")], -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if code, _ := td.do(t, "ada@lab", "POST", "/s/s-1/lab/confirm", form); code != 303 {
		t.Fatalf("confirm: %d", code)
	}
	sent := td.fake.sentLab()
	if r, ok := sent[len(sent)-1].req.(workflows.ConfirmExperimentRequest); !ok || r.Experiment != "x-0004" || r.Digest != "sha256:plan4" {
		t.Errorf("confirm sent %+v, want x-0004 with the digest shown", sent[len(sent)-1].req)
	}
}

// TestUploadShowsTheSchema: an uploaded table's schema is shown: each column, its type,
// how it was read, and the row count; a header with a script in it is shown escaped.
func TestUploadShowsTheSchema(t *testing.T) {
	td := labDesk(t)
	csv := []byte("\"<script>alert('x')</script>\",dose (mg),day\nA1,\"1.000,5\",2026-11-02\nA2,\"2.000,5\",2026-11-03\n")
	code, body := td.upload(t, "ada@lab", "/s/s-1/data", nil, "Plate reads (v2).csv", csv)
	if code != 303 {
		t.Fatalf("upload: %d\n%.500s", code, body)
	}
	tab, err := dataset.Read(csv, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, body = td.do(t, "ada@lab", "GET", "/s/s-1/lab", nil)
	want := []string{"<h3>Plate_reads_v2 ", "2 rows, 3 columns"}
	for _, c := range tab.Schema.Columns {
		want = append(want, "<td><code>"+htmlEscape(c.Name)+"</code></td><td>"+htmlEscape(c.Header)+"</td>", "<td>"+c.Type+"</td><td>"+htmlEscape(c.Read)+"</td>")
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("the lab page lacks %q", w)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("a column's header is shown unescaped")
	}
}

// TestAnalysisPage: an analysis record is shown whole to those who may read the session:
// its kind (exploratory labelled), the query as registered, the tables read, the
// statistics and the rows, escaped; an id the session has not, or that is no id, is a 404;
// to a scientist the session is not shared with, it is a session that does not exist.
func TestAnalysisPage(t *testing.T) {
	td := labDesk(t)
	a := store.AnalysisRecord{ID: "x-0002-run-2", Experiment: "x-0002", Hypothesis: "h-0002", Kind: string(experiment.Exploratory),
		Plan: "sha256:plan2", Query: "SELECT dose, signal FROM plates WHERE well <> '" + evilText + "'", Test: "pearson", Columns: []string{"dose", "signal"},
		Inputs: []store.AnalysisInput{{Table: "plates", Digest: strings.Repeat("d2", 32)}}, PlannedAt: "2026-11-20T10:00:00Z", Ran: "2026-11-21T10:00:00Z",
		ResultColumns: []string{"dose", "signal"}, Rows: [][]any{{0, 1.2}, {10, evilText}}, RowCount: 2,
		Stats: &stats.Result{Test: "pearson", N: []int{2}, StatisticName: "t", Statistic: 3.5, DF: 46, P: 0.001,
			Effect: stats.Effect{Name: "r", Value: 0.62, CI: &stats.Interval{Low: 0.31, High: 0.81, Level: 0.95}}}}
	if _, err := td.st.PutAnalysis(t.Context(), "s-1", a); err != nil {
		t.Fatal(err)
	}
	code, body := td.do(t, "bob@lab", "GET", "/s/s-1/analysis/x-0002-run-2", nil)
	for _, want := range []string{`<span class="tag kind-exploratory">exploratory</span>`, htmlEscape(a.Query), strings.Repeat("d2", 32),
		"t = 3.5, df 46, p 0.001; r 0.62, 95% CI [0.31, 0.81]; n 2", "<td>" + htmlEscape(evilText) + "</td>", `href="/s/s-1/lab#x-0002"`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("the analysis page (%d) lacks %q", code, want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("the analysis page shows a script unescaped")
	}
	for _, path := range []string{"/s/s-1/analysis/x-0009-run-1", "/s/s-1/analysis/..%2Fx"} {
		if code, _ := td.do(t, "bob@lab", "GET", path, nil); code != 404 {
			t.Errorf("%s: %d, want 404", path, code)
		}
	}
	other := labDeskFor(t, "")
	if _, err := other.st.PutAnalysis(t.Context(), "s-1", a); err != nil {
		t.Fatal(err)
	}
	if code, body := other.do(t, "bob@lab", "GET", "/s/s-1/analysis/x-0002-run-2", nil); code != 404 || strings.Contains(body, "plates") {
		t.Errorf("bob reads an analysis of a session not shared with him: %d", code)
	}
}

// TestLabRefusalsSayWhy: what the session refuses is shown with its reason; a table the
// session refuses stays stored, and the page says so with its digest.
func TestLabRefusalsSayWhy(t *testing.T) {
	td := labDesk(t)
	td.fake.labRefuses = map[string]string{
		workflows.AddDataset:        "cannot add-dataset: session s-1 is completed",
		workflows.ConfirmExperiment: "confirm-experiment: the plan of x-0004 is not the one shown (digest sha256:plan4, not sha256:other): read it again",
	}
	code, body := td.upload(t, "ada@lab", "/s/s-1/data", nil, "plates.csv", plates)
	stored, _ := td.st.Datasets(t.Context(), "s-1")
	if code != 409 || len(stored) != 1 || !strings.Contains(body, "The table is stored (digest "+stored[0].Digest[:12]+"), but the session refused it: cannot add-dataset: session s-1 is completed") {
		t.Errorf("a table the session refuses: %d, %d stored\n%.800s", code, len(stored), body)
	}
	code, body = td.do(t, "ada@lab", "POST", "/s/s-1/lab/confirm", url.Values{"experiment": {"x-0004"}, "digest": {"sha256:other"}})
	if code != 409 || !strings.Contains(body, "is not the one shown (digest sha256:plan4, not sha256:other)") {
		t.Errorf("a confirmation of another digest: %d\n%.800s", code, body)
	}
}
