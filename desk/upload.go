package main

// The lab's tables, uploaded at the desk (issue #46): only by people who may steer the
// session, capped by --max-upload-mb before anything is read into the store, read by
// internal/dataset (which refuses a file it cannot read right, with the reason), stored
// content-addressed in the session store (encrypted where the session is) by the same
// store.PutDataset `starter data add` uses, and only then announced to the session by the
// add-dataset update, signed by the person like every other act of the desk.

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// defaultMaxUploadMB is the upload cap when --max-upload-mb does not say: a lab's plate
// reader or qPCR export is a few MB, a million-row CSV about 60.
const defaultMaxUploadMB = 64

// uploadSlack is what an upload's body may hold besides its file: the form's other
// fields and the multipart headers.
const uploadSlack = 64 << 10

// uploadInMemory is how much of an upload's parts are held in memory while the body is
// read; the rest waits in temporary files, removed when the request ends.
const uploadInMemory = 8 << 20

// uploadTime is how long an upload's body may take to arrive, instead of the server's
// ReadTimeout for forms (httpguard): 64 MB over a slow link.
const uploadTime = 10 * time.Minute

// uploadPath are the routes that take a file: an upload alone, and a result given with
// its data.
var uploadPath = regexp.MustCompile(`^/s/[^/]+/(data|lab/result)$`)

// uploadRequest says whether r is a file upload to one of the routes that take one. Only
// these bypass the form's bound and have their CSRF token checked by their handler
// (readUpload), after the access check, since the token is inside the multipart body.
func uploadRequest(r *http.Request) bool {
	if r.Method != http.MethodPost || !uploadPath.MatchString(r.URL.Path) {
		return false
	}
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && ct == "multipart/form-data"
}

// bounded caps every request's body: a form's at maxBody, an upload's at the upload cap
// and a little for the form around the file.
func (d *desk) bounded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(maxBody)
		if uploadRequest(r) {
			limit = d.maxUpload + uploadSlack
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// capText names the upload cap as the person can act on it.
func (d *desk) capText() string {
	return "the desk takes files of at most " + sizeText(d.maxUpload) + " (--max-upload-mb)"
}

// sizeText is a size in MB, or in bytes when it is not a whole number of MB.
func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// readUpload reads an upload's multipart body, once the handler has checked the person
// may steer the session, and checks the form's CSRF token in it. A body over the cap is
// refused (413) naming the cap, before anything is stored. On a refusal it has answered,
// and returns false; the caller removes the form's temporary files (r.MultipartForm).
func (d *desk) readUpload(w http.ResponseWriter, r *http.Request, who auth.Who) bool {
	// The server's deadlines (httpguard) are a form's; an upload's body may take longer to
	// arrive, and the answer waits for the session after it. Not every writer can (a test's).
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(uploadTime))
	_ = rc.SetWriteDeadline(time.Now().Add(uploadTime + 2*labTimeout))
	err := r.ParseMultipartForm(uploadInMemory)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		d.refuse(w, r, http.StatusRequestEntityTooLarge, "The upload is too large: "+d.capText()+". Nothing was stored.")
		return false
	case err != nil:
		d.refuse(w, r, http.StatusBadRequest, "The upload cannot be read ("+err.Error()+"). Nothing was stored.")
		return false
	case !who.CheckCSRF(r.PostFormValue("csrf")):
		d.forbid(w, r, who, "this form's token (CSRF): reload the page and send the form again")
		return false
	}
	return true
}

// refuse answers a refusal of what the person sent, with what to do, on the error page.
func (d *desk) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	d.render(w, r, code, "error", &errorPage{Title: "Refused", Message: msg})
}

// upload takes a table for the session: POST /s/{id}/data.
func (d *desk) upload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	who, _, ok := d.allowed(w, r, id, access.ActSteer)
	if !ok {
		return
	}
	if !uploadRequest(r) {
		d.refuse(w, r, http.StatusUnsupportedMediaType, "A table is sent as a file (a form with enctype multipart/form-data). Nothing was stored.")
		return
	}
	if !d.readUpload(w, r, who) {
		return
	}
	defer r.MultipartForm.RemoveAll()
	ds, ok := d.addUploaded(w, r, id, who)
	if !ok {
		return
	}
	http.Redirect(w, r, "/s/"+id+"/lab#dataset-"+ds.Digest[:12], http.StatusSeeOther)
}

// addUploaded stores the uploaded file (the form's "file", named "table" or after the
// file) and announces it to the session, signed by who. On a refusal it has answered.
func (d *desk) addUploaded(w http.ResponseWriter, r *http.Request, id string, who auth.Who) (workflows.LabDataset, bool) {
	file, head, err := r.FormFile("file")
	if err != nil {
		d.refuse(w, r, http.StatusUnprocessableEntity, "No file: choose the table to upload (CSV, TSV, Parquet or JSON lines).")
		return workflows.LabDataset{}, false
	}
	defer file.Close()
	if head.Size > d.maxUpload {
		d.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s is %s: %s. Nothing was stored.", head.Filename, sizeText(head.Size), d.capText()))
		return workflows.LabDataset{}, false
	}
	table := strings.TrimSpace(r.PostFormValue("table"))
	if table == "" {
		table = dataset.TableName(head.Filename)
	}
	if !dataset.ValidTableName(table) {
		d.refuse(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("The table's name %q is not a name analyses can use: letters, digits and _, starting with a letter or _, at most 63. Nothing was stored.", table))
		return workflows.LabDataset{}, false
	}
	data, err := io.ReadAll(io.LimitReader(file, d.maxUpload+1))
	if err != nil {
		d.fail(w, r, err)
		return workflows.LabDataset{}, false
	}
	rec, err := d.st.PutDataset(r.Context(), id, head.Filename, data, dataset.Options{MaxBytes: d.maxUpload}, d.now())
	var bad *dataset.Refused
	if errors.As(err, &bad) {
		d.refuse(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("%s cannot be read as a table: %s. Nothing was stored.", head.Filename, strings.TrimPrefix(bad.Error(), "dataset: ")))
		return workflows.LabDataset{}, false
	}
	if err != nil {
		d.fail(w, r, err)
		return workflows.LabDataset{}, false
	}
	return d.announce(w, r, id, who, table, rec)
}

// announce sends the add-dataset update for a stored table, signed by who: its place in
// the session's history marks the data's arrival.
func (d *desk) announce(w http.ResponseWriter, r *http.Request, id string, who auth.Who, table string, rec store.DatasetRecord) (workflows.LabDataset, bool) {
	ans, err := d.sendLab(r, id, workflows.AddDataset, who.ID, func(by, sig string) any {
		return workflows.DatasetRequest{Table: table, Digest: rec.Digest, Rows: rec.Schema.Rows, Columns: len(rec.Schema.Columns), By: by, BySig: sig}
	})
	var ref *refused
	if errors.As(err, &ref) {
		d.fail(w, r, &refused{fmt.Sprintf("The table is stored (digest %s), but the session refused it: %s", rec.Digest[:12], ref.msg)})
		return workflows.LabDataset{}, false
	}
	if err != nil {
		d.fail(w, r, err)
		return workflows.LabDataset{}, false
	}
	d.log.Info("desk: dataset added", "session", id, "table", table, "digest", rec.Digest, "bytes", rec.Bytes, "by", who.ID)
	if ans.Dataset == nil {
		return workflows.LabDataset{Table: table, Digest: rec.Digest}, true
	}
	return *ans.Dataset, true
}
