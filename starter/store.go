package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// The session store, as the starter reads it: reports, and every session that Temporal no
// longer keeps (its retention deleted the workflow) but the store still does. The worker
// and the starter name it the same way: --store, else COSCI_STORE, else the directory the
// local worker uses.

// storeFlag is --store, which every command takes.
var storeFlag string

const defaultStore = ".data/sessions"

// storeMigrating is --store-migrating, which every command takes; unset, the environment
// (COSCI_STORE_MIGRATING) decides, as for the worker.
var storeMigrating optionalBool

// optionalBool is a boolean flag that knows whether it was given.
type optionalBool struct{ set, on bool }

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.on)
}

func (b *optionalBool) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("want true or false")
	}
	b.set, b.on = true, on
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

// migrating says whether the store is read as a migrating deployment's (store.Migrating).
func migrating() (bool, error) {
	if storeMigrating.set {
		return storeMigrating.on, nil
	}
	return store.MigratingFromEnv(os.Getenv)
}

func storeLocation() string {
	switch {
	case storeFlag != "":
		return storeFlag
	case os.Getenv("COSCI_STORE") != "":
		return os.Getenv("COSCI_STORE")
	}
	return defaultStore
}

// openStore opens the session store for reading. A directory that does not exist is not
// created: this machine has no store there.
func openStore(ctx context.Context) (*store.Store, error) {
	loc := storeLocation()
	if !store.IsDatabase(loc) {
		if _, err := os.Stat(loc); err != nil {
			return nil, fmt.Errorf("no session store at %s on this machine: name the workers' store with --store or COSCI_STORE (a postgres:// URL, password in PGPASSWORD)", store.Redact(loc))
		}
	}
	return openStoreAt(ctx, loc)
}

// openStoreAt opens the store at a location with the lab's keys, if any.
func openStoreAt(ctx context.Context, loc string) (*store.Store, error) {
	keys, err := labKeys()
	if err != nil {
		return nil, err
	}
	migrate, err := migrating()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	st, err := store.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	st.Encrypt(keys)
	st.Migrating(migrate)
	return st, nil
}

// notInTemporal is Temporal's answer for a session it does not know (or no longer keeps).
type notInTemporal struct{ id string }

func (e *notInTemporal) Error() string {
	return fmt.Sprintf("no session %s: list them with: starter list", e.id)
}

func isNotInTemporal(err error) bool {
	var n *notInTemporal
	return errors.As(err, &n)
}

// fromStore answers for a session Temporal does not know, from the store. What it
// returns, if the store has the session, replaces Temporal's "not found"; otherwise the
// original error stands, with where the starter looked.
func fromStore[T any](ctx context.Context, id string, gone error, answer func(context.Context, *store.Store) (T, error)) (T, error) {
	var zero T
	st, err := openStore(ctx)
	if err != nil {
		return zero, fmt.Errorf("%w (and %v)", gone, err)
	}
	defer st.Close()
	v, err := answer(ctx, st)
	if errors.Is(err, fs.ErrNotExist) {
		return zero, fmt.Errorf("%w (nor in the session store at %s)", gone, st.Location())
	}
	if err != nil {
		return zero, err
	}
	fmt.Fprintf(stderr, "session %s is no longer kept by Temporal; answered from the session store at %s (as of its last checkpoint)\n", id, st.Location())
	return v, nil
}

// storedAnswer is a query's answer from a session's latest checkpoint and event log.
func storedAnswer[T any](name string, page workflows.Page, id string) func(context.Context, *store.Store) (T, error) {
	return func(ctx context.Context, st *store.Store) (T, error) {
		var out T
		if name == workflows.QueryHistory {
			events, err := st.Events(ctx, id)
			if err == nil && len(events) == 0 {
				err = fmt.Errorf("session %s has no event log: %w", id, fs.ErrNotExist)
			}
			if err != nil {
				return out, err
			}
			return any(workflows.StoredHistory(events, page)).(T), nil
		}
		snap, err := st.LatestCheckpoint(ctx, id)
		if err != nil {
			return out, err
		}
		var v any
		switch name {
		case workflows.QueryStatus:
			v = workflows.StoredStatus(snap)
		case workflows.QueryProgress:
			v = workflows.StoredProgress(snap)
		case workflows.QueryState:
			v = workflows.StoredState(snap, page)
		default:
			return out, fmt.Errorf("the session store cannot answer the %s query", name)
		}
		return v.(T), nil
	}
}

// storedStart parses an index row's creation time.
func storedStart(s store.Summary) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s.Created)
	return t
}

// storedTree is id's lineage from the session index: the tree of a session Temporal no
// longer keeps.
func storedTree(ctx context.Context, st *store.Store, id string) (*treeNode, error) {
	rows, err := st.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	t, ok := store.Lineage(rows, id)
	if !ok {
		return nil, fmt.Errorf("session %s is not in the session index: %w", id, fs.ErrNotExist)
	}
	var node func(t *store.Tree) *treeNode
	node = func(t *store.Tree) *treeNode {
		n := &treeNode{ID: t.SessionID, Type: t.Type, Relation: t.Relation, State: string(t.Status),
			Archived: t.Archived != "", Started: storedStart(t.Summary), Parent: t.Parent}
		for _, c := range t.Children {
			n.Children = append(n.Children, node(c))
		}
		return n
	}
	return node(t), nil
}

// storedRows are the list rows of the sessions in the index that Temporal's list lacks.
func storedRows(ctx context.Context, known map[string]bool, o listOptions) ([]listRow, int, error) {
	st, err := openStore(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer st.Close()
	sums, err := st.Sessions(ctx)
	if err != nil {
		return nil, 0, err
	}
	var rows []listRow
	hidden := 0
	for _, s := range sums {
		if known[s.SessionID] || (o.status != "" && string(s.Status) != o.status) || (o.scientist != "" && s.ScientistID != o.scientist) {
			continue
		}
		r := listRow{ID: s.SessionID, Started: storedStart(s), Scientist: s.ScientistID, Goal: s.Goal, Status: string(s.Status) + ", store only"}
		n := int64(s.Hypotheses)
		r.Hypotheses = &n
		if s.Archived != "" {
			if !o.archived {
				hidden++
				continue
			}
			r.Status += ", archived"
		}
		rows = append(rows, r)
	}
	return rows, hidden, nil
}
