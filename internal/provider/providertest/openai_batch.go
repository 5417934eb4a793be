package providertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// OpenAI: the Files API (for a batch's input and output) and the Batch API.

// openAIBatchMax is how many requests an OpenAI batch may hold.
const openAIBatchMax = 50000

type file struct {
	id, name, purpose string
	data              []byte
	created           time.Time
}

func (f *file) object() map[string]any {
	return map[string]any{"id": f.id, "object": "file", "bytes": len(f.data), "created_at": f.created.Unix(),
		"filename": f.name, "purpose": f.purpose, "status": "processed", "status_details": nil}
}

// purposes are the purposes the Files API takes.
var purposes = map[string]bool{"assistants": true, "batch": true, "fine-tune": true, "vision": true, "user_data": true, "evals": true}

func (s *Server) handleFileUpload(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		s.refused()
		writeOpenAIError(w, *badRequest("the upload is not multipart/form-data: %v", err))
		return
	}
	purpose := r.FormValue("purpose")
	if !purposes[purpose] {
		s.refused()
		writeOpenAIError(w, apiError{status: 400, kind: "invalid_request_error", param: "purpose", message: fmt.Sprintf("'%s' is not one of ['fine-tune', 'assistants', 'batch', 'user_data', 'responses', 'vision', 'evals'] - 'purpose'", purpose)})
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.refused()
		writeOpenAIError(w, apiError{status: 400, kind: "invalid_request_error", param: "file", message: "Missing required parameter: 'file'."})
		return
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return
	}
	fl := &file{id: s.newID("file-fake"), name: hdr.Filename, purpose: purpose, data: data, created: s.clock.Now()}
	s.mu.Lock()
	s.files[fl.id] = fl
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, fl.object())
}

func (s *Server) fileOf(w http.ResponseWriter, r *http.Request) *file {
	id := r.PathValue("id")
	s.mu.Lock()
	f := s.files[id]
	s.mu.Unlock()
	if f == nil {
		s.refused()
		writeOpenAIError(w, apiError{status: 404, kind: "invalid_request_error", param: "id", message: "No such File object: " + id})
	}
	return f
}

func (s *Server) handleFileGet(w http.ResponseWriter, r *http.Request) {
	if f := s.fileOf(w, r); f != nil {
		writeJSON(w, http.StatusOK, f.object())
	}
}

func (s *Server) handleFileContent(w http.ResponseWriter, r *http.Request) {
	if f := s.fileOf(w, r); f != nil {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(f.data)
	}
}

func (s *Server) handleFileDelete(w http.ResponseWriter, r *http.Request) {
	if f := s.fileOf(w, r); f != nil {
		s.mu.Lock()
		delete(s.files, f.id)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"id": f.id, "object": "file", "deleted": true})
	}
}

// batchEndpoints are the endpoints a batch may target, and whether the fake serves them.
var batchEndpoints = map[string]bool{
	"/v1/chat/completions": true, "/v1/embeddings": true,
	"/v1/responses": false, "/v1/completions": false, "/v1/moderations": false,
}

func (s *Server) handleBatchCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		InputFileID      string            `json:"input_file_id"`
		Endpoint         string            `json:"endpoint"`
		CompletionWindow string            `json:"completion_window"`
		Metadata         map[string]string `json:"metadata"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.problem("a batch request that is not JSON: %v", err)
		writeOpenAIError(w, *badRequest("We could not parse the JSON body of your request. (%v)", err))
		return
	}
	refuse := func(status int, param, format string, args ...any) {
		s.refused()
		writeOpenAIError(w, apiError{status: status, kind: "invalid_request_error", param: param, message: fmt.Sprintf(format, args...)})
	}
	served, known := batchEndpoints[req.Endpoint]
	switch {
	case !known:
		refuse(400, "endpoint", "Invalid value: '%s'. Supported values are: '/v1/chat/completions', '/v1/embeddings', '/v1/completions', '/v1/responses' and '/v1/moderations'.", req.Endpoint)
		return
	case !served:
		s.problem("a batch for %s: the fake serves batches of /v1/chat/completions and /v1/embeddings only", req.Endpoint)
		refuse(400, "endpoint", "the fake does not serve batches for %s", req.Endpoint)
		return
	case req.CompletionWindow != "24h":
		refuse(400, "completion_window", "Invalid value: '%s'. Supported values are: '24h'.", req.CompletionWindow)
		return
	}
	s.mu.Lock()
	in := s.files[req.InputFileID]
	s.mu.Unlock()
	switch {
	case in == nil:
		refuse(404, "input_file_id", "No such File object: %s", req.InputFileID)
		return
	case in.purpose != "batch":
		refuse(400, "input_file_id", "The input file %s was uploaded with purpose '%s'; a batch needs purpose 'batch'.", in.id, in.purpose)
		return
	}
	items, invalid := batchLines(in.data, req.Endpoint)
	b := s.newBatch("openai", "batch_fake", items)
	s.mu.Lock()
	b.endpoint, b.inputFileID, b.metadata = req.Endpoint, req.InputFileID, req.Metadata
	if len(invalid) > 0 { // validation fails: the batch is created, then failed
		b.items, b.invalid, b.outcome, b.endedAt = nil, invalid, "failed", b.created
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.openAIBatch(b, "validating"))
}

// batchLines reads a batch's input file: one request per line, {custom_id, method, url,
// body}. It returns the validation errors OpenAI would report, with their line numbers.
func batchLines(data []byte, endpoint string) (items []batchItem, invalid []map[string]any) {
	bad := func(line int, code, format string, args ...any) {
		invalid = append(invalid, map[string]any{"code": code, "line": line, "message": fmt.Sprintf(format, args...), "param": nil})
	}
	seen := map[string]bool{}
	model := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var l struct {
			CustomID string          `json:"custom_id"`
			Method   string          `json:"method"`
			URL      string          `json:"url"`
			Body     json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(text, &l); err != nil {
			bad(line, "invalid_json_line", "This line is not parseable as valid JSON.")
			continue
		}
		var body struct {
			Model string `json:"model"`
		}
		switch {
		case l.CustomID == "":
			bad(line, "missing_required_parameter", "custom_id is required")
		case seen[l.CustomID]:
			bad(line, "duplicate_custom_id", "The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.")
		case l.Method != "POST":
			bad(line, "invalid_method", "The method for this request is '%s'; it must be POST.", l.Method)
		case l.URL != endpoint:
			bad(line, "mismatched_endpoint", "The url for this request does not match the batch endpoint '%s'.", endpoint)
		case json.Unmarshal(l.Body, &body) != nil || body.Model == "":
			bad(line, "missing_required_parameter", "The body for this request must be a JSON object with a model.")
		case model != "" && body.Model != model:
			bad(line, "mismatched_model", "The provided model '%s' does not match the model '%s' of the batch's other requests; a batch uses one model.", body.Model, model)
		default:
			model = body.Model
			seen[l.CustomID] = true
			items = append(items, batchItem{customID: l.CustomID, body: l.Body})
		}
	}
	switch {
	case sc.Err() != nil:
		bad(line+1, "invalid_json_line", "The line is too long: %v", sc.Err())
	case len(items) == 0 && len(invalid) == 0:
		bad(0, "empty_file", "The batch input file is empty. Please ensure that the batch contains at least one request.")
	case len(items) > openAIBatchMax:
		bad(0, "too_many_requests", "The batch input file has %d requests; at most %d.", len(items), openAIBatchMax)
	}
	return items, invalid
}

func (s *Server) openAIBatchNamed(w http.ResponseWriter, r *http.Request) *batch {
	id := r.PathValue("id")
	b := s.batchOf("openai", id)
	if b == nil {
		s.refused()
		writeOpenAIError(w, apiError{status: 404, kind: "invalid_request_error", param: "batch_id", message: "No batch found with id '" + id + "'."})
	}
	return b
}

func (s *Server) handleBatchGet(w http.ResponseWriter, r *http.Request) {
	if b := s.openAIBatchNamed(w, r); b != nil {
		s.observe(b)
		writeJSON(w, http.StatusOK, s.openAIBatch(b, ""))
	}
}

func (s *Server) handleBatchCancel(w http.ResponseWriter, r *http.Request) {
	b := s.openAIBatchNamed(w, r)
	if b == nil {
		return
	}
	if !s.cancel(b) {
		s.refused()
		writeOpenAIError(w, apiError{status: 409, kind: "invalid_request_error", message: fmt.Sprintf("Cannot cancel a batch with status '%s'.", s.status(b))})
		return
	}
	writeJSON(w, http.StatusOK, s.openAIBatch(b, "cancelling"))
}

// openAIBatch is a batch as the API shows it; status overrides the status now ("" keeps it).
func (s *Server) openAIBatch(b *batch, status string) map[string]any {
	if status == "" {
		status = s.status(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at := stamper(func(t time.Time) any { return t.Unix() })
	var inProgress, finalizing, completed, failed, expired, cancelling, cancelled time.Time
	if b.delay >= 0 && b.outcome != "failed" && b.cancelAt.IsZero() {
		now := s.clock.Now()
		if t := b.created.Add(b.delay / 10); !now.Before(t) {
			inProgress = t
		}
		if t := b.created.Add(b.delay - b.delay/10); !now.Before(t) && b.delay <= completionWindow {
			finalizing = t
		}
	}
	switch b.outcome {
	case "completed":
		completed = b.endedAt
		if inProgress.IsZero() || inProgress.After(b.endedAt) {
			inProgress = b.endedAt
		}
		if finalizing.IsZero() || finalizing.After(b.endedAt) {
			finalizing = b.endedAt
		}
	case "failed":
		failed = b.endedAt
	case "expired":
		expired = b.endedAt
	case "cancelled":
		cancelled = b.endedAt
	}
	if !b.cancelAt.IsZero() {
		cancelling = b.cancelAt
	}
	_, kinds := b.counts()
	var errs any
	if len(b.invalid) > 0 {
		errs = map[string]any{"object": "list", "data": b.invalid}
	}
	var meta any
	if b.metadata != nil {
		meta = b.metadata
	}
	nilIfEmpty := func(id string) any {
		if id == "" {
			return nil
		}
		return id
	}
	u := b.usage
	return map[string]any{
		"id": b.id, "object": "batch", "endpoint": b.endpoint, "errors": errs, "input_file_id": b.inputFileID,
		"completion_window": "24h", "status": status,
		"output_file_id": nilIfEmpty(b.outputFileID), "error_file_id": nilIfEmpty(b.errorFileID),
		"created_at": b.created.Unix(), "in_progress_at": at(inProgress), "expires_at": b.created.Add(completionWindow).Unix(),
		"finalizing_at": at(finalizing), "completed_at": at(completed), "failed_at": at(failed), "expired_at": at(expired),
		"cancelling_at": at(cancelling), "cancelled_at": at(cancelled),
		"request_counts": map[string]any{"total": len(b.items), "completed": kinds["succeeded"], "failed": kinds["errored"] + kinds["expired"]},
		"metadata":       meta,
		"usage": map[string]any{
			"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
			"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": u.Input + u.Output,
		},
	}
}

// writeOutputFiles writes an ended batch's results as OpenAI does: the successes in the
// output file, the failures (and the requests that expired or were cancelled) in the
// error file, one JSON line per request with its custom_id. Called with s.mu held.
func (s *Server) writeOutputFiles(b *batch) {
	var out, errs bytes.Buffer
	for i, r := range b.results {
		line := map[string]any{"id": fmt.Sprintf("batch_req_fake_%d_%d", b.seq, i), "custom_id": r.customID, "response": nil, "error": nil}
		dst := &errs
		switch r.kind {
		case "succeeded":
			line["response"] = map[string]any{"status_code": 200, "request_id": fmt.Sprintf("req_fake_%d_%d", b.seq, i), "body": r.body}
			dst = &out
		case "errored":
			line["response"] = map[string]any{"status_code": r.err.status, "request_id": fmt.Sprintf("req_fake_%d_%d", b.seq, i), "body": r.err.openAIBody()}
		case "expired":
			line["error"] = map[string]any{"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}
		case "canceled":
			line["error"] = map[string]any{"code": "batch_cancelled", "message": "This request was not executed because the batch was cancelled."}
		}
		data, _ := json.Marshal(line)
		dst.Write(data)
		dst.WriteByte('\n')
	}
	for _, f := range []struct {
		data *bytes.Buffer
		id   *string
	}{{&out, &b.outputFileID}, {&errs, &b.errorFileID}} {
		if f.data.Len() == 0 {
			continue
		}
		s.ids++
		fl := &file{id: fmt.Sprintf("file-fake%06d", s.ids), name: b.id + "_output.jsonl", purpose: "batch_output", data: f.data.Bytes(), created: b.endedAt}
		if f.id == &b.errorFileID {
			fl.name = b.id + "_error.jsonl"
		}
		s.files[fl.id] = fl
		*f.id = fl.id
	}
}
