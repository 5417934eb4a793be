package activities

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// The tournament's memory, the pairs that met and the proximity graph, grows with the
// square of a session's work; it lives in the session store, not in the workflow. The
// workflow keeps ids, ratings and counters, and what changed since its last checkpoint;
// these activities read the rest from that checkpoint.

// CheckpointRef names one checkpoint of one session: a session restored from another's
// checkpoint builds on it until it writes its own.
type CheckpointRef struct {
	Session string `json:"session,omitempty"`
	Seq     int    `json:"seq,omitempty"` // 0: none
}

// Ledger is where a session's tournament stands: checkpoint Base in the store, and what
// changed since (ratings, the pairs that met, similarities found), which the workflow keeps
// until its next checkpoint. With no Base, the changes are the whole tournament.
type Ledger struct {
	Base    CheckpointRef    `json:"base"`
	Changed []session.Entry  `json:"changed,omitempty"` // records that differ from Base's
	Played  []string         `json:"played,omitempty"`  // pairs that met since Base, "a|b"
	Edges   []proximity.Edge `json:"edges,omitempty"`   // similarities found since Base
	// Results are the matches judged since Base, of a session whose ratings are fitted.
	Results []tournament.Result `json:"results,omitempty"`
}

// read gives the tournament as it stands: Base merged with the changes.
func (a *Activities) read(ctx context.Context, l Ledger) (session.Snapshot, error) {
	delta := session.Snapshot{Hypotheses: l.Changed, Played: l.Played, Edges: l.Edges, Results: l.Results}
	if l.Base.Seq <= 0 {
		return session.Merge(session.Snapshot{}, delta), nil
	}
	base, err := a.Store.Checkpoint(ctx, l.Base.Session, l.Base.Seq)
	if err != nil {
		return session.Snapshot{}, fmt.Errorf("the tournament builds on checkpoint %d of %s: %w", l.Base.Seq, l.Base.Session, err)
	}
	return session.Merge(base, delta), nil
}

// TournamentInput asks for a round's matches.
type TournamentInput struct {
	SessionID string   `json:"session_id"`
	Ledger    Ledger   `json:"ledger"`
	New       []string `json:"new,omitempty"` // entered the tournament this round
	Budget    int      `json:"budget"`
	// DebateTopK: a match between two of the top DebateTopK is a debate (see
	// tournament.Options). Elo sessions only.
	DebateTopK int `json:"debate_top_k"`

	// Fitted: the session's ratings are fitted to its results (session.RatingFitted), and
	// its matches chosen by tournament.Active with these options.
	Fitted      bool    `json:"fitted,omitempty"`
	TopK        int     `json:"top_k,omitempty"`
	DebateShare float64 `json:"debate_share,omitempty"`
	Seed        uint64  `json:"seed,omitempty"`
	// Cluster is the cluster threshold of the session's proximity measure (0: lexical).
	Cluster float64 `json:"cluster,omitempty"`
}

// TournamentResult is the round's matches, in the order to apply their results, and the
// proximity clusters that changed.
type TournamentResult struct {
	Matches  []tournament.Match `json:"matches"`
	Clusters map[string]int     `json:"clusters,omitempty"` // hypothesis id -> its new cluster number

	// For a fitted session: the ratings that moved past their tolerance, and how unsure the
	// top's boundary is (tournament.Ratings.BoundarySE).
	Ratings  map[string]Rated `json:"ratings,omitempty"`
	Boundary float64          `json:"boundary_se,omitempty"`
}

// Rated is a hypothesis' fitted rating on the Elo scale.
type Rated struct {
	Elo float64 `json:"elo"`
	SE  float64 `json:"se"`
}

// tolerance is how far a fitted rating, or its standard error, may move from the record's
// before the record changes: half an Elo point and a fortieth of its standard error. Every new
// result nudges hundreds of strengths by a point or less (in a pool of 2,000 with 9,000
// results, 18 more results move 300 ratings by half a point, 40 by a fortieth of their
// error); sending those back would make every record a change to checkpoint, for
// differences far inside the ratings' noise.
func tolerance(se float64) float64 { return max(0.5, se/40) }

// ratingsPerFit caps the ratings one fit sends back, so that a checkpoint's changes stay
// small whatever moves: when the pool's fitted spread shifts, the ratings of hundreds of
// hypotheses that played once or twice move together. The top 2·top_k go first, then
// the furthest moved; the rest follow in later fits.
const ratingsPerFit = 200

// Tournament chooses matches over the whole tournament. For a fitted session it fits the
// ratings to every result (tournament.Fit), returns those that moved, and picks the next
// batch where the top's boundary is uncertain (tournament.Active); a Budget of 0 only
// fits. For an Elo session it schedules a round by tournament.Schedule, from the ratings,
// the pairs that have met and the similarities. Either way it also numbers the proximity
// clusters of the competing hypotheses, which need the whole graph too. It calls no model
// and is deterministic, so it is safe to run again.
func (a *Activities) Tournament(ctx context.Context, in TournamentInput) (TournamentResult, error) {
	t, err := a.read(ctx, in.Ledger)
	if err != nil {
		return TournamentResult{}, err
	}
	var ids []string
	for _, e := range t.Hypotheses {
		if e.Excluded == "" {
			ids = append(ids, e.ID)
		}
	}
	sim := make(map[string]float64, len(t.Edges))
	for _, e := range t.Edges {
		sim[PairKey(e.A, e.B)] = e.Sim
	}
	similarity := func(x, y string) float64 { return sim[PairKey(x, y)] }
	var out TournamentResult
	if in.Fitted {
		out = fitted(t, ids, similarity, in)
	} else {
		var players []tournament.Player
		for _, e := range t.Hypotheses {
			if e.Excluded == "" {
				players = append(players, tournament.Player{ID: e.ID, Elo: e.Elo, Matches: e.Wins + e.Losses, New: slices.Contains(in.New, e.ID)})
			}
		}
		played := make(map[string]bool, len(t.Played))
		for _, p := range t.Played {
			played[p] = true
		}
		out.Matches = tournament.Schedule(players, similarity, in.Budget,
			func(x, y string) bool { return played[PairKey(x, y)] },
			tournament.Options{DebateTopK: in.DebateTopK})
	}

	// A cluster is named by the number of its first hypothesis (h-0042's cluster is 42), so
	// its name stays when others join it: numbering clusters 1, 2, 3… would rename most of
	// them whenever two merge, and every renamed record is a change to checkpoint.
	slices.SortFunc(ids, byCreation)
	edges := slices.DeleteFunc(slices.Clone(t.Edges), func(e proximity.Edge) bool {
		_, a := slices.BinarySearchFunc(ids, e.A, byCreation)
		_, b := slices.BinarySearchFunc(ids, e.B, byCreation)
		return !a || !b
	})
	cluster := make(map[string]int, len(t.Hypotheses))
	for _, e := range t.Hypotheses {
		cluster[e.ID] = e.Cluster
	}
	threshold := in.Cluster
	if threshold <= 0 {
		threshold = proximity.ClusterThreshold
	}
	for n, members := range proximity.Clusters(ids, edges, threshold) {
		name := n + 1
		if _, err := fmt.Sscanf(members[0], "h-%d", &name); err != nil {
			name = n + 1
		}
		for _, id := range members {
			if cluster[id] != name {
				if out.Clusters == nil {
					out.Clusters = map[string]int{}
				}
				out.Clusters[id] = name
			}
		}
	}
	return out, nil
}

// fitted rates a fitted session's competing hypotheses (ids) from all its results and
// chooses the next batch of matches, up to in.Budget model calls, by tournament.Active.
func fitted(t session.Snapshot, ids []string, similarity func(x, y string) float64, in TournamentInput) TournamentResult {
	// The records hold the last fit: start from it (tournament.FitFrom).
	elo := make(map[string]session.Entry, len(t.Hypotheses))
	from := make(map[string]tournament.Rating, len(t.Hypotheses))
	for _, e := range t.Hypotheses {
		elo[e.ID] = e
		if e.EloSE > 0 {
			from[e.ID] = tournament.RatingOf(e.Elo, e.EloSE)
		}
	}
	r := tournament.FitFrom(from, ids, t.Results)
	out := TournamentResult{Boundary: r.BoundarySE(ids, in.TopK)}
	// The ratings that moved, the top's first, then the furthest moved for their error; at
	// most ratingsPerFit of them.
	type move struct {
		id   string
		top  bool
		size float64
	}
	top := 2 * max(in.TopK, 1)
	rank := make(map[string]int, len(ids))
	for i, id := range r.Ranked(ids) {
		rank[id] = i
	}
	var moves []move
	for _, id := range ids {
		now, was := r.By[id], elo[id]
		// How far it moved, in tolerances.
		size := max(math.Abs(now.Elo()-was.Elo), math.Abs(now.EloSE()-was.EloSE)) / tolerance(now.EloSE())
		if size >= 1 {
			moves = append(moves, move{id, rank[id] < top, size})
		}
	}
	slices.SortFunc(moves, func(x, y move) int {
		if x.top != y.top {
			if x.top {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(y.size, x.size); c != 0 {
			return c
		}
		return strings.Compare(x.id, y.id)
	})
	for _, m := range moves[:min(len(moves), ratingsPerFit)] {
		if out.Ratings == nil {
			out.Ratings = map[string]Rated{}
		}
		out.Ratings[m.id] = Rated{Elo: r.By[m.id].Elo(), SE: r.By[m.id].EloSE()}
	}
	if in.Budget <= 0 {
		return out
	}
	out.Matches = tournament.Active(tournament.Contenders(ids, r, t.Results), similarity, in.Budget,
		tournament.ActiveOptions{TopK: in.TopK, DebateShare: in.DebateShare, Seed: in.Seed})
	return out
}

// themesOf groups the top hypotheses (best first) into the overview's themes: by their
// embeddings when the session's provider offers them and the store holds theirs, else by
// their words (tf-idf); see proximity.ThemesOf.
func (a *Activities) themesOf(ctx context.Context, sessionID, providerName, model string, top []research.Hypothesis) ([][]string, error) {
	ids := make([]string, len(top))
	for i, h := range top {
		ids[i] = h.ID
	}
	if e, m, err := a.embedder(providerName, model); err == nil && e != nil {
		vecs, err := a.Store.Embeddings(ctx, sessionID, m, ids)
		if err != nil {
			return nil, err
		}
		if len(vecs) == len(ids) {
			measure := proximity.Embedding(m, a.Thresholds)
			sim := func(i, j int) float64 { return proximity.Cosine(vecs[ids[i]], vecs[ids[j]]) }
			return proximity.ThemesOf(top, sim, measure.Theme), nil
		}
	}
	return proximity.ThemesOf(top, proximity.TFIDF(top), proximity.ThemeSimilarity), nil
}

// PairKey names the pair of x and y whichever way round they come.
func PairKey(x, y string) string {
	if x > y {
		x, y = y, x
	}
	return x + "|" + y
}

// byCreation orders hypothesis ids the way a session made them: "h-0999" before
// "h-1000", and "h-9999" before "h-10000".
func byCreation(x, y string) int {
	if c := cmp.Compare(len(x), len(y)); c != 0 && strings.HasPrefix(x, "h-") && strings.HasPrefix(y, "h-") {
		return c
	}
	return strings.Compare(x, y)
}

// RankingInput asks for a page of a checkpoint's hypotheses.
type RankingInput struct {
	Checkpoint CheckpointRef `json:"checkpoint"`
	Offset     int           `json:"offset"`
	Limit      int           `json:"limit"`
	// Packed asks for the page packed (RankingPage.Packed), up to PackedPageLimit records.
	Packed bool `json:"packed,omitempty"`
}

// RankingPage is a page of a checkpoint's hypotheses in the order they were made, and
// how many it has in all. Asked for packed, the page's records are in Packed instead of
// Hypotheses: their JSON, gzipped. The page is in the history of the run that reads it, and
// a query on a finished session replays that run, fetching and decoding its history each
// time: packed, a page is about a tenth of the bytes. Entries gives the records either way.
type RankingPage struct {
	Hypotheses []session.Entry `json:"hypotheses,omitempty"`
	Packed     []byte          `json:"packed,omitempty"`
	Total      int             `json:"total"`
}

// RankingPageLimit keeps a page of records well under Temporal's payload warnings: a
// record is about 250 bytes. PackedPageLimit is the limit for a packed page: a record
// packs into 30 to 80 bytes (the lower for titles in a session's repeated vocabulary).
const (
	RankingPageLimit = 500
	PackedPageLimit  = 1000
)

// Entries are the page's records, unpacked if they are packed. A workflow reads them:
// gzip and JSON are pure functions of the bytes.
//
//workflowcheck:ignore
func (p RankingPage) Entries() ([]session.Entry, error) {
	if p.Packed == nil {
		return p.Hypotheses, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(p.Packed))
	if err != nil {
		return nil, fmt.Errorf("a packed page of hypotheses: %w", err)
	}
	var entries []session.Entry
	if err := json.NewDecoder(zr).Decode(&entries); err != nil {
		return nil, fmt.Errorf("a packed page of hypotheses: %w", err)
	}
	return entries, nil
}

// pack is entries as RankingPage.Packed holds them.
func pack(entries []session.Entry) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(entries); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Ranking reads a page of a checkpoint's records: the next run of a session that continued
// as new reads its hypotheses back from the checkpoint written just before, a page at a
// time, so that no payload grows with the session.
func (a *Activities) Ranking(ctx context.Context, in RankingInput) (RankingPage, error) {
	limit := RankingPageLimit
	if in.Packed {
		limit = PackedPageLimit
	}
	if in.Limit <= 0 || in.Limit > limit {
		in.Limit = limit
	}
	snap, err := a.Store.Checkpoint(ctx, in.Checkpoint.Session, in.Checkpoint.Seq)
	if err != nil {
		return RankingPage{}, err
	}
	entries := snap.Hypotheses
	slices.SortFunc(entries, func(x, y session.Entry) int { return byCreation(x.ID, y.ID) })
	lo := min(max(in.Offset, 0), len(entries))
	hi := min(lo+in.Limit, len(entries))
	if !in.Packed {
		return RankingPage{Hypotheses: entries[lo:hi], Total: len(entries)}, nil
	}
	packed, err := pack(entries[lo:hi])
	if err != nil {
		return RankingPage{}, err
	}
	return RankingPage{Packed: packed, Total: len(entries)}, nil
}
