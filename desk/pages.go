package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// listLimit is how many sessions the list asks Temporal for.
const listLimit = 200

// list is "my sessions": those the signed-in person may read, with filters; those that
// wait for them first, each with why.
func (d *desk) list(w http.ResponseWriter, r *http.Request) {
	who, _ := auth.WhoFrom(r.Context())
	rows, err := d.sessions(r.Context())
	if err != nil {
		d.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	whose, status, text := q.Get("whose"), q.Get("status"), strings.ToLower(q.Get("q"))
	var shown []Row
	for _, row := range rows {
		rec, err := d.record(r.Context(), row.ID, row.Scientist)
		if err != nil || !access.Decide(who.Identity, rec, access.ActRead).Allowed {
			continue
		}
		mine := rec.Owner == who.ID
		switch {
		case whose == "mine" && !mine, whose == "shared" && (mine || rec.Level(who.ID) == ""):
			continue
		case status != "" && !strings.HasPrefix(row.Status, status):
			continue
		case text != "" && !strings.Contains(strings.ToLower(row.Goal+" "+row.ID), text):
			continue
		}
		if !d.waitsFor(who, rec, row) {
			row.Needs = session.Needs{} // it waits for someone else
		}
		shown = append(shown, row)
	}
	slices.SortStableFunc(shown, func(a, b Row) int { return cmp.Compare(b.Needs.Rank(), a.Needs.Rank()) })
	waiting := 0
	for _, row := range shown {
		if row.Needs.Any() {
			waiting++
		}
	}
	var states []string
	for _, s := range session.States {
		states = append(states, string(s))
	}
	d.render(w, r, http.StatusOK, "list", &listPage{frame: frame{Waiting: waiting}, Rows: shown, Whose: whose, Status: status, Q: q.Get("q"),
		States: states, Form: startForm{}, Reviews: research.ReviewTypes, Safety: research.SafetyLevels, Providers: research.Providers})
}

// startForm is the start form's fields, kept to show them again with an error.
type startForm struct {
	Goal, MaxHypotheses, TimeLimit, ReviewTypes, SafetyLevel, Provider, Model string
	TokenBudget, BudgetUSD, Tools, ApproveTools, ToolCallsPerTurn             string
	ToolCallsPerSession, Seed, ApprovalTimeout                                string
	Error                                                                     string
}

// start starts a session as the signed-in person: the scientist is who they are, never a
// name typed in a form. The request gets the checks `starter start` makes (research's
// validation, and the tools against what the workers offer) before anything starts.
func (d *desk) start(w http.ResponseWriter, r *http.Request) {
	who, _ := auth.WhoFrom(r.Context())
	f := startForm{Goal: r.PostFormValue("goal"), MaxHypotheses: r.PostFormValue("max_hypotheses"), TimeLimit: r.PostFormValue("time_limit"),
		ReviewTypes: r.PostFormValue("review_types"), SafetyLevel: r.PostFormValue("safety_level"), Provider: r.PostFormValue("provider"),
		Model: r.PostFormValue("model"), TokenBudget: r.PostFormValue("token_budget"), BudgetUSD: r.PostFormValue("budget_usd"),
		Tools: r.PostFormValue("tools"), ApproveTools: r.PostFormValue("approve_tools"), ToolCallsPerTurn: r.PostFormValue("tool_calls_per_turn"),
		ToolCallsPerSession: r.PostFormValue("tool_calls_per_session"), Seed: r.PostFormValue("seed"),
		ApprovalTimeout: r.PostFormValue("approval_timeout")}
	req, err := f.request(who.ID)
	if err == nil && len(req.Config.Tools) > 0 {
		cat, cerr := d.be.Tools(r.Context())
		if err = cerr; err == nil {
			err = workflows.CheckTools(req.Config, cat)
		}
	}
	if err != nil {
		f.Error = err.Error()
		d.render(w, r, http.StatusUnprocessableEntity, "list", &listPage{Form: f, Reviews: research.ReviewTypes,
			Safety: research.SafetyLevels, Providers: research.Providers})
		return
	}
	if !d.mayStart(w, r, who.ID) {
		return
	}
	id := newSessionID(req.ResearchGoal, d.sealed)
	// The owner is recorded before the session starts, so that no moment exists in which
	// the session is anyone's but the person's who started it; and only where no record
	// is, so that a start never takes over another session's grants.
	created, err := d.st.CreateAccess(r.Context(), id, access.Record{SessionID: id, Owner: who.ID})
	if err == nil && !created {
		err = &refused{fmt.Sprintf("session %s already exists", id)}
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if err := d.be.Start(r.Context(), id, req); err != nil {
		d.fail(w, r, err)
		return
	}
	d.log.Info("desk: session started", "session", id, "by", who.ID)
	d.listed.mu.Lock()
	d.listed.rows = nil // the list shows it at once
	d.listed.mu.Unlock()
	http.Redirect(w, r, "/s/"+id, http.StatusSeeOther)
}

// mayStart says whether person may start one more session now: fewer than d.running of
// theirs running, and fewer than the hour's starts; else it has answered 429.
func (d *desk) mayStart(w http.ResponseWriter, r *http.Request, person string) bool {
	if d.running > 0 {
		rows, err := d.sessions(r.Context())
		if err != nil {
			d.fail(w, r, err)
			return false
		}
		n := 0
		for _, row := range rows {
			// Not ended: a session state that goes on, or a workflow that runs and has
			// not said its state yet.
			st := session.State(row.Status)
			if row.Scientist == person && (row.Status == "running" || slices.Contains(session.States, st) && !st.Terminal()) {
				n++
			}
		}
		if n >= d.running {
			tooMany(w, time.Minute, fmt.Sprintf("at most %d sessions of one person running at once, and %d of yours are; end one (terminate) or wait for one to finish", d.running, n))
			return false
		}
	}
	if wait, ok := d.starts.allow(person); !ok {
		tooMany(w, wait, fmt.Sprintf("at most %d sessions started an hour by one person (each is many model turns)", d.starts.limit))
		return false
	}
	return true
}

// request reads the start form into a validated request for scientist.
func (f startForm) request(scientist string) (research.Request, error) {
	req := research.Request{ResearchGoal: strings.TrimSpace(f.Goal), ScientistID: scientist}
	c := &req.Config
	var errs []error
	give := func(field string) { _ = c.Give(field) }
	num := func(name, v string, set func(float64)) {
		if v = strings.TrimSpace(v); v == "" {
			return
		}
		n, err := strconv.ParseFloat(strings.NewReplacer("_", "", ",", "").Replace(v), 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a number", name, v))
			return
		}
		set(n)
		give(name)
	}
	dur := func(name, v string, set func(research.Duration)) {
		if v = strings.TrimSpace(v); v == "" {
			return
		}
		t, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a duration such as 2h or 30m", name, v))
			return
		}
		set(research.Duration(t))
		give(name)
	}
	num("max_hypotheses", f.MaxHypotheses, func(n float64) { c.MaxHypotheses = int(n) })
	num("token_budget", f.TokenBudget, func(n float64) { c.TokenBudget = int(n) })
	num("budget_usd", f.BudgetUSD, func(n float64) { c.BudgetUSD = n })
	num("tool_calls_per_turn", f.ToolCallsPerTurn, func(n float64) { c.ToolCallsPerTurn = int(n) })
	num("tool_calls_per_session", f.ToolCallsPerSession, func(n float64) { c.ToolCallsPerSession = int(n) })
	num("seed", f.Seed, func(n float64) { c.Seed = int64(n) })
	dur("time_limit", f.TimeLimit, func(d research.Duration) { c.TimeLimit = d })
	dur("approval_timeout", f.ApprovalTimeout, func(d research.Duration) { c.ApprovalTimeout = d })
	list := func(s string) []string {
		var out []string
		for _, e := range strings.Split(s, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
		return out
	}
	if c.ReviewTypes = list(f.ReviewTypes); len(c.ReviewTypes) > 0 {
		give("review_types")
	}
	if c.Tools = list(f.Tools); len(c.Tools) > 0 {
		give("tools")
	}
	if c.ApproveTools = list(f.ApproveTools); len(c.ApproveTools) > 0 {
		give("approve_tools")
	}
	for field, v := range map[string]*string{"safety_level": &f.SafetyLevel, "provider": &f.Provider, "model": &f.Model} {
		if *v = strings.TrimSpace(*v); *v != "" {
			give(field)
		}
	}
	c.SafetyLevel, c.Provider, c.Model = f.SafetyLevel, f.Provider, f.Model
	if len(errs) > 0 {
		return req, errors.Join(errs...)
	}
	req = req.WithDefaults()
	if err := req.Validate(); err != nil {
		return req, fmt.Errorf("invalid session: %w", err)
	}
	return req, nil
}

// hypothesis is one hypothesis in full: statement, rationale, predictions, reviews with
// their citations' verdicts, lineage, and its entry in the ranking.
func (d *desk) hypothesis(w http.ResponseWriter, r *http.Request) {
	id, hid := r.PathValue("id"), r.PathValue("hid")
	who, rec, ok := d.allowed(w, r, id, access.ActRead)
	if !ok {
		return
	}
	h, err := d.st.Hypothesis(r.Context(), id, hid)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	reviews, err := d.st.Reviews(r.Context(), id, hid)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.fail(w, r, err)
		return
	}
	// The hypothesis' entry (rating, cluster, exclusion), from the ranking's pages.
	var entry *session.Entry
	for off := 0; entry == nil; off += workflows.MaxPageLimit {
		v, err := d.be.State(r.Context(), id, workflows.Page{Offset: off, Limit: workflows.MaxPageLimit})
		if err != nil || len(v.Hypotheses) == 0 {
			break
		}
		for i := range v.Hypotheses {
			if v.Hypotheses[i].ID == hid {
				entry = &v.Hypotheses[i]
			}
		}
	}
	page := &hypothesisPage{ID: id, H: h, Entry: entry, Hypothesis: hid}
	if st, err := d.be.Status(r.Context(), id); err == nil && !st.State.Terminal() {
		page.CanSteer = access.Decide(who.Identity, rec, access.ActSteer).Allowed
	}
	page.Tests, page.TestsNote = d.hypothesisTests(r.Context(), id, hid, who, page.CanSteer)
	for i, c := range report.Citations(h.References, reviews) {
		page.Refs = append(page.Refs, d.linked(id, "h/"+hid, i, c))
	}
	for _, rv := range reviews {
		page.Reviews = append(page.Reviews, reviewPage{Review: rv, Cited: citation.Join(h.References, rv.Citations)})
	}
	d.render(w, r, http.StatusOK, "hypothesis", page)
}

// command sends one of the scientist's commands, from its form, with the same checks as
// the command line (session.ParseCommand), and shows the session again.
func (d *desk) command(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("id"), r.PathValue("name")
	who, _, ok := d.allowed(w, r, id, access.ActSteer)
	if !ok {
		return
	}
	if _, known := session.LookupCommand(name); !known {
		d.fail(w, r, &refused{fmt.Sprintf("no command %q", name)})
		return
	}
	payload, by, err := d.signedCommand(id, name, r.PostForm, who.ID)
	if err != nil {
		d.fail(w, r, &refused{err.Error()})
		return
	}
	d.log.Info("desk: command", "session", id, "command", name, "by", who.ID, "update", by.Update)
	if _, err := d.be.Command(r.Context(), id, name, by.Update, payload); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/s/"+id, http.StatusSeeOther)
}

// signedCommand is a command's payload from its form, with who sends it and this desk's
// signature of that very command, to be sent as the update by.Update.
func (d *desk) signedCommand(id, name string, form url.Values, who string) (map[string]any, signedBy, error) {
	payload, cmd, err := commandPayload(name, form, session.CleanBy(who))
	if err != nil {
		return nil, signedBy{}, err
	}
	by := d.sign(id, name, cmd.Digest(), who)
	payload["by_sig"] = by.Sig // the session records who sent every command, and that this desk vouches for it
	return payload, by, nil
}

// commandPayload reads a command's form into its payload, sent by by, checked as the
// session checks it, and the command the session will read from it.
func commandPayload(name string, form url.Values, by string) (map[string]any, session.Command, error) {
	spec, _ := session.LookupCommand(name)
	arg := map[string]any{}
	for _, field := range spec.Fields {
		v := strings.TrimSpace(form.Get(field))
		if v == "" {
			continue
		}
		switch field {
		case "token_budget":
			n, err := strconv.Atoi(strings.NewReplacer("_", "", ",", "").Replace(v))
			if err != nil {
				return nil, session.Command{}, fmt.Errorf("%s: %q is not a whole number of tokens", field, v)
			}
			arg[field] = n
		case "score", "budget_usd":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, session.Command{}, fmt.Errorf("%s: %q is not a number", field, v)
			}
			arg[field] = f
		case "testable_predictions":
			var ps []string
			for _, l := range strings.Split(v, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					ps = append(ps, l)
				}
			}
			arg[field] = ps
		default:
			arg[field] = v
		}
	}
	arg["by"] = by
	b, err := json.Marshal(arg)
	if err != nil {
		return nil, session.Command{}, err
	}
	cmd, err := session.ParseCommand(name, b)
	if err != nil {
		return nil, cmd, err
	}
	return arg, cmd, nil
}

// share grants or revokes access to a session: its owner or an admin, recorded in the
// store with who shared it and when.
func (d *desk) share(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	who, rec, ok := d.allowed(w, r, id, access.ActShare)
	if !ok {
		return
	}
	rec, err := access.Share(rec, r.PostFormValue("who"), access.Level(r.PostFormValue("level")), who.ID, d.now())
	if err != nil {
		d.fail(w, r, &refused{err.Error()})
		return
	}
	if err := d.st.PutAccess(r.Context(), id, rec); err != nil {
		d.fail(w, r, err)
		return
	}
	n := d.live.poke(func(s *liveStream) bool { return s.session == id }) // each checks whether it may still read
	d.log.Info("desk: shared", "session", id, "streams", n, "with", r.PostFormValue("who"), "level", r.PostFormValue("level"), "by", who.ID)
	http.Redirect(w, r, "/s/"+id+"#sharing", http.StatusSeeOther)
}

// file serves a report artefact: the HTML report in place, sandboxed (no script, no
// forms, its own origin), the others as downloads.
func (d *desk) file(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("id"), r.PathValue("name")
	if _, _, ok := d.allowed(w, r, id, access.ActRead); !ok {
		return
	}
	if !slices.Contains(report.Artefacts, name) {
		d.fail(w, r, errNoSession)
		return
	}
	b, err := d.st.File(r.Context(), id, name)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	h := w.Header()
	switch {
	case name == report.HTMLFile && r.URL.Query().Get("download") == "":
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'")
		h.Del("X-Frame-Options")
	default:
		h.Set("Content-Type", contentType(name))
		h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", id+"-"+name))
	}
	_, _ = w.Write(b)
}

func contentType(name string) string {
	switch {
	case strings.HasSuffix(name, ".json"):
		return "application/json"
	case strings.HasSuffix(name, ".svg"):
		return "image/svg+xml"
	case strings.HasSuffix(name, ".html"):
		return "text/html; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

// tree is the session's lineage: its root and every session started from it (continued,
// forked, subagents); of those the signed-in person may not read, only the id.
func (d *desk) tree(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	who, _, ok := d.allowed(w, r, id, access.ActRead)
	if !ok {
		return
	}
	root, err := d.lineage(r, id, who)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "tree", &treePage{ID: id, Root: root})
}

// answerCalls answers tool calls that wait: several at once ("Approve selected"), or one
// (its own button), each as its own answer-tool command, recorded with who sent it.
func (d *desk) answerCalls(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	who, _, ok := d.allowed(w, r, id, access.ActSteer)
	if !ok {
		return
	}
	decision, calls := r.PostFormValue("decision"), r.PostForm["calls"]
	if one := strings.Fields(r.PostFormValue("one")); len(one) == 2 {
		decision, calls = one[0], one[1:]
	}
	if decision != "approve" && decision != "reject" {
		d.fail(w, r, &refused{"answer the calls with approve or reject"})
		return
	}
	if len(calls) == 0 {
		d.fail(w, r, &refused{"no call selected: tick the calls to " + decision})
		return
	}
	if len(calls) > maxCallsAnswered {
		d.fail(w, r, &refused{fmt.Sprintf("at most %d calls at once", maxCallsAnswered)})
		return
	}
	var problems []string
	for _, call := range calls {
		form := url.Values{"call": {call}, "decision": {decision}}
		if reason := strings.TrimSpace(r.PostFormValue("reason")); reason != "" && decision == "reject" {
			form.Set("reason", reason)
		}
		payload, by, err := d.signedCommand(id, "answer-tool", form, who.ID)
		if err == nil {
			_, err = d.be.Command(r.Context(), id, "answer-tool", by.Update, payload)
		}
		if err != nil {
			problems = append(problems, call+": "+err.Error())
		}
	}
	d.log.Info("desk: calls answered", "session", id, "decision", decision, "calls", len(calls), "refused", len(problems), "by", who.ID)
	if len(problems) > 0 {
		d.fail(w, r, &refused{fmt.Sprintf("%d of %d calls answered; not: %s", len(calls)-len(problems), len(calls), strings.Join(problems, "; "))})
		return
	}
	http.Redirect(w, r, "/s/"+id+"#waiting", http.StatusSeeOther)
}

// maxCallsAnswered bounds the calls one form answers.
const maxCallsAnswered = 100
