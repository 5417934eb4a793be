package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Prompts in pieces. A session's prompts repeat themselves: every call of a round starts
// with the same prefix (the co-scientist's role, the goal, the plan, the latest
// meta-review), and each hypothesis' text is in the prompt of every match it plays, its
// reviews and its evolutions. A turn record keeps its prompt as a list of parts instead:
// each paragraph of at least minPiece bytes is a piece, a record of its own under
// pieces/<digest> that every prompt holding that paragraph names; shorter text stays in
// the turn record. So each paragraph is stored once per session, whatever the prompts'
// wording, as long as they keep paragraphs apart with blank lines, as prose does.
//
// A piece is written before the turn record that names it, write-once like every record
// of a turn: two writers of one piece write the same bytes, and the first one's stays. A
// piece is its text, compressed when that makes it smaller, and reads back only if its
// digest still matches: a turn whose piece is missing or changed is damaged.

const (
	piecesDir = "pieces"
	// minPiece is the shortest paragraph kept as a piece: a reference costs about 20
	// bytes of a compressed turn record, and a piece a record of its own. On an
	// 800-hypothesis session 64 stores the fewest bytes (as 32 does, with more records;
	// 128 stores 8% more): BENCHMARKS.md.
	minPiece = 64
)

// promptPart is a part of a stored prompt: text of its own, or a piece named by digest.
type promptPart struct {
	Text  string `json:"text,omitempty"`
	Piece string `json:"piece,omitempty"`
}

// storedTurn is a turn record as the store keeps it: the Turn with its prompt in parts.
// Its Prompt shadows Turn.Prompt in JSON, so records written before prompts were split,
// which hold the prompt whole, still read.
type storedTurn struct {
	Turn
	Prompt *string      `json:"prompt,omitempty"`
	Parts  []promptPart `json:"prompt_parts,omitempty"`
}

// pieceDigest names a piece: the first 128 bits of the SHA-256 of its text, in hex. Two
// different paragraphs would have to collide in 128 bits to be confused, which no session
// comes near.
func pieceDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}

var pieceRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

func pieceKey(digest string) string { return piecesDir + "/" + digest }

// splitPrompt cuts a prompt after each blank line into paragraphs: those of at least
// minPiece bytes become pieces, the text between them parts of their own. The parts
// joined are the prompt, byte for byte, even where it is not UTF-8.
func splitPrompt(prompt string) (parts []promptPart, pieces map[string]string) {
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, promptPart{Text: text.String()})
			text.Reset()
		}
	}
	for rest := prompt; rest != ""; {
		n := strings.Index(rest, "\n\n")
		if n < 0 {
			n = len(rest)
		} else {
			n += 2
		}
		para := rest[:n]
		rest = rest[n:]
		// Text that is not UTF-8 is a piece whatever its length: a piece keeps its bytes,
		// where JSON would replace them.
		if len(para) < minPiece && utf8.ValidString(para) {
			text.WriteString(para)
			continue
		}
		flush()
		d := pieceDigest(para)
		if pieces == nil {
			pieces = map[string]string{}
		}
		pieces[d] = para
		parts = append(parts, promptPart{Piece: d})
	}
	flush()
	return parts, pieces
}

// encodePiece is a piece's record: its text compressed, or as it is when compressing
// does not make it smaller (and it cannot be taken for a compressed record).
func encodePiece(text string) []byte {
	if z := pack([]byte(text)); len(z) < len(text) || compressed([]byte(text)) {
		return z
	}
	return []byte(text)
}

// putPieces writes the pieces of a prompt, each once.
func (s *Store) putPieces(ctx context.Context, sessionID string, pieces map[string]string) error {
	for d, text := range pieces {
		if s.pieces.has(sessionID, d) {
			continue
		}
		if err := s.b.Put(ctx, sessionID, pieceKey(d), encodePiece(text), true); err != nil {
			return err
		}
		s.pieces.add(sessionID, d)
	}
	return nil
}

// prompt joins a stored turn's parts back into its prompt. A missing or changed piece
// makes the turn record at key damaged.
func (s *Store) prompt(ctx context.Context, sessionID, key string, parts []promptPart) (string, error) {
	damaged := func(problem string) error {
		return &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, key), Problem: problem}
	}
	var keys []string
	for i, p := range parts {
		switch {
		case p.Piece == "" && p.Text == "":
			return "", damaged(fmt.Sprintf("part %d of its prompt is empty", i+1))
		case p.Piece == "":
			continue
		case p.Text != "" || !pieceRE.MatchString(p.Piece):
			return "", damaged(fmt.Sprintf("part %d of its prompt names no piece (%.40q)", i+1, p.Piece))
		}
		keys = append(keys, pieceKey(p.Piece))
	}
	records, err := s.getMany(ctx, sessionID, keys)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Piece == "" {
			b.WriteString(p.Text)
			continue
		}
		pk := pieceKey(p.Piece)
		raw, ok := records[pk]
		if !ok {
			return "", damaged(fmt.Sprintf("its prompt's piece %s is missing: no %s", p.Piece, s.b.Where(sessionID, pk)))
		}
		text, err := unpack(raw)
		if err == nil && pieceDigest(string(text)) != p.Piece {
			err = errors.New("its content does not match its digest")
		}
		if err != nil {
			return "", damaged(fmt.Sprintf("its prompt's piece %s is damaged (%v)", s.b.Where(sessionID, pk), err))
		}
		b.Write(text)
	}
	return b.String(), nil
}

// batchGetter is a Backend that reads several records of a session at once: Postgres, in
// one query where reading a prompt's pieces one by one would take a round trip each.
type batchGetter interface {
	GetMany(ctx context.Context, sessionID string, keys []string) (map[string][]byte, error)
}

// getMany reads the records of a session with the given keys; a missing one is absent
// from the map.
func (s *Store) getMany(ctx context.Context, sessionID string, keys []string) (map[string][]byte, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if g, ok := s.Backend().(batchGetter); ok {
		records, err := g.GetMany(ctx, sessionID, keys)
		if err != nil {
			return nil, unavailable(err)
		}
		for k, b := range records {
			if records[k], err = s.sealer().open(sessionID, k, b); err != nil {
				return nil, err
			}
		}
		return records, nil
	}
	records := make(map[string][]byte, len(keys))
	for _, k := range keys {
		raw, err := s.b.Get(ctx, sessionID, k)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		records[k] = raw
	}
	return records, nil
}

// piecesOf returns the keys of the pieces a record names: a turn record's, none for any
// other. A record that cannot be read names none: copying it copies what there is.
func piecesOf(key string, raw []byte) []string {
	if !strings.HasPrefix(key, turnsDir+"/") {
		return nil
	}
	plain, err := unpack(raw)
	if err != nil {
		return nil
	}
	var rec struct {
		Parts []promptPart `json:"prompt_parts"`
	}
	if json.Unmarshal(plain, &rec) != nil {
		return nil
	}
	var keys []string
	for _, p := range rec.Parts {
		if pieceRE.MatchString(p.Piece) {
			keys = append(keys, pieceKey(p.Piece))
		}
	}
	return keys
}

// copyRecords gives session to the records of session from with the given keys
// (Backend.Copy), and with each turn record the pieces its prompt names, copied first: a
// turn record in to finds its pieces there.
func (s *Store) copyRecords(ctx context.Context, from, to string, keys []string) error {
	var pieces []string
	seen := map[string]bool{}
	for _, k := range keys {
		if !strings.HasPrefix(k, turnsDir+"/") {
			continue
		}
		raw, err := s.b.Get(ctx, from, k)
		if errors.Is(err, fs.ErrNotExist) {
			continue // Copy skips it too
		}
		if err != nil {
			return err
		}
		for _, pk := range piecesOf(k, raw) {
			if !seen[pk] {
				seen[pk] = true
				pieces = append(pieces, pk)
			}
		}
	}
	if len(pieces) > 0 {
		if err := s.b.Copy(ctx, from, to, pieces); err != nil {
			return err
		}
	}
	return s.b.Copy(ctx, from, to, keys)
}

// pieceSet remembers pieces this process has written or found written, so that a turn
// does not write again the prefix every turn of its round shares: on PostgreSQL each
// write, even one that changes nothing, is a round trip. Pieces are never removed, so what
// it remembers stays true. It forgets everything when full, which costs only writes.
type pieceSet struct {
	mu  sync.Mutex
	set map[string]struct{} // session id + "/" + digest
}

// piecesKept bounds the pieces remembered: a few MB.
const piecesKept = 1 << 16

func (p *pieceSet) has(sessionID, digest string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.set[sessionID+"/"+digest]
	return ok
}

func (p *pieceSet) add(sessionID, digest string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.set == nil || len(p.set) >= piecesKept {
		p.set = make(map[string]struct{})
	}
	p.set[sessionID+"/"+digest] = struct{}{}
}
