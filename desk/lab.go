package main

// The lab at the desk (issue #46): a session's tables and experiments on one page
// (/s/{id}/lab), each hypothesis' tests on its own page, and the scientist's acts on them:
// plan an experiment, confirm its plan (pre-registration), give a result (a table added,
// or uploaded in the same form), withdraw a result or the experiment with a reason. Each
// act is one of the workflow's lab updates, sent as a new update id and signed by the
// person (internal/vouch), as the other commands are. What the pages show of the plans,
// results and reasons is data a model or a person wrote: html/template escapes it.

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"go.temporal.io/api/serviceerror"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

func (b *temporalBackend) Experiments(ctx context.Context, id string) (workflows.ExperimentsView, error) {
	var v workflows.ExperimentsView
	err := b.query(ctx, id, workflows.QueryExperiments, &v)
	var failed *serviceerror.QueryFailed
	if errors.As(err, &failed) && strings.Contains(failed.Message, "unknown queryType") {
		return workflows.ExperimentsView{}, nil // a worker of a build before the lab
	}
	return v, err
}

func (b *temporalBackend) Lab(ctx context.Context, id, name, updateID string, req any) (workflows.LabAnswer, error) {
	return update[workflows.LabAnswer](ctx, b, id, name, updateID, []any{req}, labTimeout)
}

// sendLab sends one of the lab's updates as person: build makes the request with who
// sends it and the signature (empty, for the digest the signature covers, which is made
// without them as the session makes it: workflows.LabDigest).
func (d *desk) sendLab(r *http.Request, id, name, person string, build func(by, sig string) any) (workflows.LabAnswer, error) {
	by := d.sign(id, name, workflows.LabDigest(name, build("", "")), person)
	d.log.Info("desk: lab", "session", id, "update", name, "by", person, "id", by.Update)
	return d.be.Lab(r.Context(), id, name, by.Update, build(by.ID, by.Sig))
}

// labExperiment is an experiment as the pages show it, with the analysis its standing
// rests on (the pre-registered run's record, cited as analysis:<id>).
type labExperiment struct {
	workflows.LabExperiment
	Analysis    string // "analysis:<id>"
	AnalysisRun string // <id>
	// What its forms need: the session, whether the person may act, their CSRF token, and
	// the tables a result may be.
	Session  string
	CanSteer bool
	CSRF     string
	Choices  []workflows.LabDataset
}

// TableOf is the name of the session's table with that digest, "" if none.
func (x labExperiment) TableOf(digest string) string {
	for _, d := range x.Choices {
		if d.Digest == digest {
			return d.Table
		}
	}
	return ""
}

// labDataset is a table of the session with its schema as the store read it; Missing
// says why there is none to show.
type labDataset struct {
	workflows.LabDataset
	Record  *store.DatasetRecord
	Missing string
}

// labPage is a session's lab.
type labPage struct {
	frame
	ID          string
	Hypothesis  string // none: the plan form asks which
	CanSteer    bool
	Ended       bool
	Why         string
	Note        string
	Datasets    []labDataset
	Experiments []labExperiment
	MaxUploadMB int64
}

// lab shows the session's tables and experiments: GET /s/{id}/lab.
func (d *desk) lab(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	who, rec, ok := d.allowed(w, r, id, access.ActRead)
	if !ok {
		return
	}
	st, err := d.be.Status(r.Context(), id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	page := &labPage{ID: id, Ended: st.State.Terminal(), MaxUploadMB: d.maxUpload >> 20}
	page.CanSteer = access.Decide(who.Identity, rec, access.ActSteer).Allowed && !page.Ended
	v, err := d.be.Experiments(r.Context(), id)
	if errors.Is(err, errNoSession) {
		page.Note = "Temporal no longer keeps this session: its experiments are in its report (Tested in the lab)."
	} else if err != nil {
		d.fail(w, r, err)
		return
	}
	page.Why, page.Experiments = v.Why, shownExperiments(v, "", id, who, page.CanSteer)
	for _, ds := range v.Datasets {
		page.Datasets = append(page.Datasets, d.withSchema(r.Context(), id, ds))
	}
	d.render(w, r, http.StatusOK, "lab", page)
}

// withSchema is a table with its stored record.
func (d *desk) withSchema(ctx context.Context, id string, ds workflows.LabDataset) labDataset {
	rec, err := d.st.Dataset(ctx, id, ds.Digest)
	if err != nil {
		d.log.Warn("desk: a dataset's record", "session", id, "digest", ds.Digest, "err", err)
		return labDataset{LabDataset: ds, Missing: "its record cannot be read from the session store"}
	}
	return labDataset{LabDataset: ds, Record: &rec}
}

// shownExperiments are session id's experiments as the pages show them to who (with
// their forms when steer); those of hypothesis hid alone unless it is "".
func shownExperiments(v workflows.ExperimentsView, hid, id string, who auth.Who, steer bool) []labExperiment {
	var out []labExperiment
	for _, e := range v.Experiments {
		if hid != "" && e.Hypothesis != hid {
			continue
		}
		x := labExperiment{LabExperiment: e, Session: id, CanSteer: steer, CSRF: who.CSRF, Choices: v.Datasets}
		for _, l := range e.Labels {
			if l.Kind == experiment.PreRegistered && e.Result != nil && l.Run.Data == e.Result.Data {
				x.Analysis, x.AnalysisRun = "analysis:"+l.Run.ID, l.Run.ID
			}
		}
		out = append(out, x)
	}
	return out
}

// labAct is one of the scientist's acts on the lab: POST /s/{id}/lab/{act}.
func (d *desk) labAct(w http.ResponseWriter, r *http.Request) {
	id, act := r.PathValue("id"), r.PathValue("act")
	who, _, ok := d.allowed(w, r, id, access.ActSteer)
	if !ok {
		return
	}
	if uploadRequest(r) {
		if !d.readUpload(w, r, who) {
			return
		}
		defer r.MultipartForm.RemoveAll()
	}
	form := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	exp := form("experiment")
	var name string
	var build func(by, sig string) any
	switch act {
	case "plan":
		name = workflows.PlanExperiment
		build = func(by, sig string) any {
			return workflows.PlanRequest{Hypothesis: form("hypothesis"), Prediction: form("prediction"), By: by, BySig: sig}
		}
	case "confirm":
		name = workflows.ConfirmExperiment
		build = func(by, sig string) any {
			return workflows.ConfirmExperimentRequest{Experiment: exp, Digest: form("digest"), By: by, BySig: sig}
		}
	case "result":
		data, ok := d.resultData(w, r, id, who)
		if !ok {
			return
		}
		name = workflows.ExperimentResult
		build = func(by, sig string) any {
			return workflows.ResultRequest{Experiment: exp, Data: data, By: by, BySig: sig}
		}
	case "withdraw-result", "withdraw-experiment":
		name = map[string]string{"withdraw-result": workflows.WithdrawResult, "withdraw-experiment": workflows.WithdrawExperiment}[act]
		build = func(by, sig string) any {
			return workflows.WithdrawRequest{Experiment: exp, Reason: form("reason"), By: by, BySig: sig}
		}
	default:
		d.fail(w, r, errNoSession)
		return
	}
	ans, err := d.sendLab(r, id, name, who.ID, build)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if ans.Experiment != nil {
		exp = ans.Experiment.ID
	}
	http.Redirect(w, r, "/s/"+id+"/lab#"+exp, http.StatusSeeOther)
}

// resultData is the digest of a result's data: a table the session holds, chosen, or one
// uploaded in the same form (stored and added first). On a refusal it has answered.
func (d *desk) resultData(w http.ResponseWriter, r *http.Request, id string, who auth.Who) (string, bool) {
	chosen := strings.TrimSpace(r.PostFormValue("data"))
	uploaded := r.MultipartForm != nil && len(r.MultipartForm.File["file"]) > 0 && r.MultipartForm.File["file"][0].Filename != ""
	switch {
	case chosen != "" && uploaded:
		d.refuse(w, r, http.StatusUnprocessableEntity, "Choose a table the session holds or upload one, not both. Nothing was stored.")
		return "", false
	case chosen != "":
		return chosen, true
	case !uploaded:
		d.refuse(w, r, http.StatusUnprocessableEntity, "No data: choose a table the session holds, or upload the result's table.")
		return "", false
	}
	ds, ok := d.addUploaded(w, r, id, who)
	return ds.Digest, ok
}

// hypothesisTests are a hypothesis' experiments, for its page; a session whose lab cannot
// be read shows none, with why.
func (d *desk) hypothesisTests(ctx context.Context, id, hid string, who auth.Who, steer bool) ([]labExperiment, string) {
	v, err := d.be.Experiments(ctx, id)
	if err != nil {
		d.log.Warn("desk: a hypothesis' tests", "session", id, "hypothesis", hid, "err", err)
		return nil, "The session's experiments cannot be read just now."
	}
	return shownExperiments(v, hid, id, who, steer), ""
}
