package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/session"
)

// Encrypt has the store seal what it writes from now on with the keyring's current key:
// every record, the events' details, and the goal and stop reason in the session index
// (AES-256-GCM, see internal/keyring). Ids, kinds, states and numbers stay readable: the
// store and its index work on them. Call it before the store is shared.
//
// Each sealed text is bound to its place, with the session id and what names it there in
// the associated data: a record's key, an event's number and kind, the index field. A
// sealed record moved to another session or key does not open, and says which record it
// is. Where the store expects sealed texts it reads only those: a plain one (written
// before encryption was turned on, or slipped in by whoever can write the store) or one
// sealed before records were bound to their session is refused, naming the record, unless
// the deployment is migrating (Migrating).
//
// A store opened without keys still recognises sealed records, and refuses them with an
// error naming the key they need, never as damaged JSON.
func (s *Store) Encrypt(k *keyring.Keyring) {
	s.keys = k
	s.rewrap()
}

// Migrating has an encrypted store read, besides texts sealed to their place, the texts of
// a deployment on its way there: plain ones, written before encryption was turned on, and
// ones sealed by an earlier version of cosci, before texts were bound to their session
// (which may have been moved between sessions unnoticed). What the store writes is sealed
// to its place either way. Turn it on (COSCI_STORE_MIGRATING=1, or the worker's
// --store-migrating) while sessions begun before run or are read, and off afterwards.
func (s *Store) Migrating(on bool) {
	s.migrating = on
	s.rewrap()
}

// rewrap builds the chain of backends the store calls: the error classification, the
// observer if any, the sealing, then the backend itself.
func (s *Store) rewrap() {
	var b Backend = s.sealer()
	if s.observe != nil {
		b = observed{b, s.observe}
	}
	s.b = guarded{b}
}

func (s *Store) sealer() sealed { return sealed{s.raw, s.keys, s.migrating} }

type sealed struct {
	Backend
	keys      *keyring.Keyring
	migrating bool // read plain and old-form texts too (Store.Migrating)
}

// Each sealed text's associated data names its place: what it is, its session, and what
// names it in the session, each part preceded by its length so that no two places read
// alike. Copy reseals a record for the session it gives it to.
func bind(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

func recordPlace(sessionID, key string) []byte { return bind("record", sessionID, key) }

func eventPlace(sessionID string, e session.Event) []byte {
	return bind("event detail", sessionID, strconv.Itoa(e.Seq), e.Kind)
}

func goalPlace(sessionID string) []byte { return bind("session goal", sessionID) }
func stopPlace(sessionID string) []byte { return bind("session stop reason", sessionID) }

// What the old form (keyring.Old) bound its texts to: a record to its key alone, other
// texts to what they are.
var (
	oldEventDetail = []byte("event detail")
	oldIndexGoal   = []byte("session goal")
	oldIndexStop   = []byte("session stop reason")
)

// unbound is the refusal of a text that is not sealed to its place, outside a migration.
func unbound(sessionID, record string, form keyring.Form) error {
	how := "is not sealed"
	if form == keyring.Old {
		how = "was sealed by an earlier version of cosci, without its session"
	}
	return &DamagedError{SessionID: sessionID, Record: record, Unbound: how}
}

func (s sealed) open(sessionID, key string, b []byte) ([]byte, error) {
	form := keyring.BlobForm(b)
	if form == keyring.Plain && (s.keys == nil || s.migrating) {
		return b, nil
	}
	if s.keys != nil && form != keyring.Sealed && !s.migrating {
		return nil, unbound(sessionID, s.Where(sessionID, key), form)
	}
	place := recordPlace(sessionID, key)
	if form == keyring.Old {
		place = []byte(key)
	}
	plain, err := s.keys.OpenBlob(b, place)
	if err != nil {
		return nil, s.damaged(sessionID, s.Where(sessionID, key), err)
	}
	return plain, nil
}

// openText opens a text field: sealed to place, or, while migrating, plain or sealed in
// the old form to old. An empty text is empty, sealed or not.
func (s sealed) openText(sessionID, record, text string, place, old []byte) (string, error) {
	form := keyring.TextForm(text)
	if text == "" || form == keyring.Plain && (s.keys == nil || s.migrating) {
		return text, nil
	}
	if s.keys != nil && form != keyring.Sealed && !s.migrating {
		return "", unbound(sessionID, record, form)
	}
	if form == keyring.Old {
		place = old
	}
	plain, err := s.keys.OpenText(text, place)
	if err != nil {
		return "", s.damaged(sessionID, record, err)
	}
	return plain, nil
}

// damaged is a sealed text that does not open: the session suspends with the reason (a key
// the worker lacks, named), rather than read half of it.
func (s sealed) damaged(sessionID, record string, err error) error {
	var unknown *keyring.UnknownKeyError
	if errors.As(err, &unknown) {
		return &DamagedError{SessionID: sessionID, Record: record, Key: unknown.ID}
	}
	return &DamagedError{SessionID: sessionID, Record: record, Problem: err.Error()}
}

func (s sealed) Get(ctx context.Context, sessionID, key string) ([]byte, error) {
	b, err := s.Backend.Get(ctx, sessionID, key)
	if err != nil {
		return nil, err
	}
	return s.open(sessionID, key, b)
}

func (s sealed) Put(ctx context.Context, sessionID, key string, data []byte, once bool) error {
	if s.keys != nil {
		data = s.keys.SealBlob(data, recordPlace(sessionID, key))
	}
	return s.Backend.Put(ctx, sessionID, key, data, once)
}

// Copy, with keys, opens each record as session from's and seals it anew as session to's:
// a sealed record is bound to its session, so the backend's copy of the bytes would not
// open there.
func (s sealed) Copy(ctx context.Context, from, to string, keys []string) error {
	if s.keys == nil {
		return s.Backend.Copy(ctx, from, to, keys)
	}
	var records map[string][]byte
	if g, ok := s.Backend.(batchGetter); ok && len(keys) > 1 {
		var err error
		if records, err = g.GetMany(ctx, from, keys); err != nil { // one round trip, not one a key
			return err
		}
	}
	for _, k := range keys {
		b, ok := records[k]
		var err error
		switch {
		case ok:
			b, err = s.open(from, k, b)
		case records != nil:
			continue // GetMany found none: Backend.Copy skips it too
		default:
			b, err = s.Get(ctx, from, k)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		if err != nil {
			return err
		}
		if err := s.Put(ctx, to, k, b, true); err != nil {
			return err
		}
	}
	return nil
}

func (s sealed) Commit(ctx context.Context, c Commit) error {
	if s.keys != nil {
		if c.Key != "" {
			c.Data = s.keys.SealBlob(c.Data, recordPlace(c.SessionID, c.Key))
		}
		events := make([]session.Event, len(c.Events))
		for i, e := range c.Events {
			e.Detail = s.keys.SealText(e.Detail, eventPlace(c.SessionID, e))
			events[i] = e
		}
		c.Events = events
		if c.Index != nil {
			row := *c.Index
			row.Goal = s.keys.SealText(row.Goal, goalPlace(row.SessionID))
			row.StopReason = s.keys.SealText(row.StopReason, stopPlace(row.SessionID))
			c.Index = &row
		}
	}
	return s.Backend.Commit(ctx, c)
}

func (s sealed) Events(ctx context.Context, sessionID string) ([]session.Event, error) {
	events, err := s.Backend.Events(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	for i, e := range events {
		record := fmt.Sprintf("event %d (%s) of the event log", e.Seq, e.Kind)
		if events[i].Detail, err = s.openText(sessionID, record, e.Detail, eventPlace(sessionID, e), oldEventDetail); err != nil {
			return nil, err
		}
	}
	return events, nil
}

func (s sealed) Sessions(ctx context.Context) ([]Summary, error) {
	rows, err := s.Backend.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		if rows[i].Goal, err = s.openText(r.SessionID, "the goal in the session index", r.Goal, goalPlace(r.SessionID), oldIndexGoal); err != nil {
			return nil, err
		}
		if rows[i].StopReason, err = s.openText(r.SessionID, "the stop reason in the session index", r.StopReason, stopPlace(r.SessionID), oldIndexStop); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// MigratingFromEnv reads COSCI_STORE_MIGRATING, which every process that opens the store
// takes (the worker's and the starter's --store-migrating override it): "1" or "true" for
// a deployment migrating (see Migrating), unset, "0" or "false" otherwise.
func MigratingFromEnv(getenv func(string) string) (bool, error) {
	v := getenv("COSCI_STORE_MIGRATING")
	if v == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("COSCI_STORE_MIGRATING is %q: set it to 1 while the deployment migrates to sealed records, 0 or nothing otherwise", v)
	}
	return on, nil
}
