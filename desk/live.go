package main

// A session's page, and its stream: the page is rendered whole from one reading of the
// session (one page query, the conversation's texts from the store); the stream sends the
// live line and, as the session changes, the parts of the page that changed (its state,
// the tool calls that wait, the conversation, the top of the ranking), each rendered for
// the person watching, as the page itself would be. The page reads without JavaScript;
// with the desk's script (static/live.js) those parts update in place.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/vouch"
	"github.com/cosci-dev/cosci/workflows"
)

// pageSize is the ranking's page on the session page; convPageSize the conversation's,
// which shows the latest messages unless the page asks for earlier ones (?c=offset).
const (
	pageSize     = 25
	convPageSize = 50
)

// latest is the conversation's page of its latest messages.
var latest = workflows.Page{Offset: -convPageSize, Limit: convPageSize}

// liveParts are the parts of a session's page its stream keeps up to date, each a
// template of session.html rendered into the element of that id.
var liveParts = []string{"status", "waiting", "turns", "ranking-rows"}

// read is one reading of session id: the page query's answer for the ranking's page at
// offset and the conversation's at convAt, and the conversation with its texts (kept from
// before when the session's conversation did not change).
func (d *desk) read(ctx context.Context, id string, offset int, convAt workflows.Page, before *snapshot) *snapshot {
	at := time.Now()
	v, err := d.be.Page(ctx, id, workflows.PageRequest{Ranking: workflows.Page{Offset: offset, Limit: pageSize}, Conversation: convAt})
	if err != nil {
		return &snapshot{Err: err, At: at}
	}
	snap := &snapshot{View: v, At: at}
	if before != nil && before.Err == nil && before.ConvErr == "" && sameConversation(before.View, v) {
		snap.Conv = before.Conv
		return snap
	}
	live := &v.Conversation
	if v.Status.State.Terminal() {
		live = nil // an ended session's conversation is the store's
	}
	conv, convErr := d.conv.Page(ctx, id, live, convAt)
	d.vouch(id, conv.Turns)
	for _, turn := range conv.Turns {
		for i := range turn.Citations {
			turn.Citations[i].Source = d.linked(id, "m/"+turn.ID, i, turn.Citations[i].Cited)
		}
	}
	snap.Conv, snap.ConvErr = conv, errText(convErr)
	return snap
}

// sameConversation says whether two page views hold the same conversation (and state,
// which decides where the conversation is read from).
func sameConversation(a, b workflows.PageView) bool {
	x, _ := json.Marshal([]any{a.Conversation, a.Status.State})
	y, _ := json.Marshal([]any{b.Conversation, b.Status.State})
	return bytes.Equal(x, y)
}

// watched is the reading a session's watcher makes: the ranking's first page and the
// conversation's latest messages, which is what a page open on the session shows.
type watched struct{ d *desk }

func (w watched) read(ctx context.Context, id string, before *snapshot) *snapshot {
	snap := w.d.read(ctx, id, 0, latest, before)
	if snap.Err != nil && (before == nil || errText(before.Err) != errText(snap.Err)) {
		// The pages say "not answering"; the reason is here, once for each new one.
		w.d.log.Warn("desk: a session does not answer its watcher", "session", id, "err", snap.Err)
	}
	return snap
}

// session is a session's page: the live line, the tool calls that wait, the
// conversation, the commands, the ranking (paged), the report and the artefacts, the
// sharing.
func (d *desk) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	offset, convAt := pageOffsets(r)
	// Access first, from the store or Temporal's visibility; then one query answers the
	// whole page (the live line, the ranking's page, the conversation).
	who, rec, ok := d.allowed(w, r, id, access.ActRead)
	if !ok {
		return
	}
	snap := d.read(r.Context(), id, offset, convAt, nil)
	if snap.Err != nil {
		d.fail(w, r, snap.Err)
		return
	}
	var files []string
	for _, name := range report.Artefacts {
		if _, err := d.st.File(r.Context(), id, name); err == nil {
			files = append(files, name)
		}
	}
	data := d.sessionData(who, rec, id, snap, offset)
	data.Files, data.HasReport = files, slices.Contains(files, report.HTMLFile)
	data.CanShare = access.Decide(who.Identity, rec, access.ActShare).Allowed
	data.Levels = access.Levels
	// What the stream keeps up to date: the ranking on its first page, the conversation
	// at its latest messages.
	// Each with a digest of what the page shows of it, so the stream sends only what
	// differs from that, not the page over again the moment it opens.
	q := url.Values{}
	for _, p := range liveParts {
		if p == "ranking-rows" && offset > 0 || p == "turns" && r.URL.Query().Has("c") {
			continue
		}
		q.Add("parts", p)
		if html, err := d.part(p, data); err == nil {
			q.Add("shown", p+":"+digest(html))
		}
	}
	// A reading older than the page's would take the page back in time.
	q.Set("since", strconv.FormatInt(snap.At.UnixNano(), 10))
	data.Events = "/s/" + id + "/events?" + q.Encode()
	d.render(w, r, http.StatusOK, "session", data)
}

// part renders one live part of the session page.
func (d *desk) part(name string, data *sessionPage) (string, error) {
	var b bytes.Buffer
	err := d.pages["session"].ExecuteTemplate(&b, name, data)
	return b.String(), err
}

// digest names a rendering of a part.
func digest(html string) string {
	sum := sha256.Sum256([]byte(html))
	return hex.EncodeToString(sum[:8])
}

// pageOffsets are the ranking's offset and the conversation's page a request asks for.
func pageOffsets(r *http.Request) (int, workflows.Page) {
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	convAt := latest
	if c, err := strconv.Atoi(r.URL.Query().Get("c")); err == nil && c >= 0 {
		convAt.Offset = c
	}
	return max(offset, 0), convAt
}

// sessionData is what the session page and its live parts are rendered from.
func (d *desk) sessionData(who auth.Who, rec access.Record, id string, snap *snapshot, offset int) *sessionPage {
	v, conv := snap.View, snap.Conv
	convEnd := conv.Offset + len(conv.Turns)
	return &sessionPage{
		frame: frame{Who: who, Mode: d.auth.Mode()},
		ID:    id, Status: v.Status, State: v.State, Line: progressLine(v.Progress), Record: rec,
		CanSteer: access.Decide(who.Identity, rec, access.ActSteer).Allowed,
		Prev:     max(offset-pageSize, 0), Next: offset + pageSize, HasPrev: offset > 0, HasNext: offset+pageSize < v.State.Total,
		Offset: offset, Conversation: conv, ConvFirst: conv.Offset + 1, ConvLast: convEnd,
		ConvPrev: max(conv.Offset-convPageSize, 0), HasConvPrev: conv.Offset > 0, ConvNext: convEnd, HasConvNext: convEnd < conv.Total,
		ConversationNote: snap.ConvErr, Converses: d.conv.Available(),
		Verdicts: research.Verdicts, Ended: v.Status.State.Terminal(),
		Trusted: d.trustedTools(id, v.Status.Trusted),
	}
}

// vouch marks in turns each "by" whose signature is not this desk key's of that very act:
// a question (its text, its update), a confirmation (its proposal and the command it
// applies, its update), each within vouch.Skew of when the session recorded it. Any client
// of the Temporal namespace may have written the others in anyone's name, or copied a
// signature from another act.
func (d *desk) vouch(id string, turns []ConversationTurn) {
	for i := range turns {
		t := &turns[i]
		asked := vouch.Act{Session: id, Kind: vouch.Ask, By: t.By, Payload: session.TextDigest(t.Text), Update: t.Update}
		t.Unsigned = t.By != "" && !d.vouched(asked, t.Sig, t.Time)
		for j := range t.Proposals {
			p := &t.Proposals[j]
			confirmed := vouch.Act{Session: id, Kind: vouch.Confirm, By: p.By, Payload: session.ConfirmDigest(p.ID, p.Digest), Update: p.Update}
			p.Unsigned = p.By != "" && !d.vouched(confirmed, p.Sig, p.At)
		}
	}
}

// trusted is a tool trusted for the session, as the page lists it: Unsigned when the
// trust-tool command that trusted it carries no signature of this desk's of that act.
type trusted struct {
	session.Trust
	Unsigned bool
}

// trustedTools are the session's trusted tools, each checked.
func (d *desk) trustedTools(id string, tools []session.Trust) []trusted {
	var out []trusted
	for _, t := range tools {
		act := vouch.Act{Session: id, Kind: "trust-tool", By: t.By, Payload: t.Digest, Update: t.Update}
		out = append(out, trusted{Trust: t, Unsigned: t.By != "" && !d.vouched(act, t.Signed, t.Time)})
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
