package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cosci-dev/cosci/internal/session"
)

// Postgres is a Backend in a PostgreSQL database, through pgx's connection pool: records in
// one table keyed by (session, key), each session's event log in another keyed by (session,
// seq), and the session index. Every worker host and the scientist's starter reach the same
// records, so nothing a session needs lives on one host's disk.
//
// Write-once records are INSERT ... ON CONFLICT DO NOTHING: of two concurrent writers of a
// key exactly one writes, and both then read the first record. A Commit is one
// transaction that holds the session's advisory lock, so events are appended with no gap
// and no repeat however many attempts race.
type Postgres struct {
	pool     *pgxpool.Pool
	location string // the URL without its password
}

// Redact returns a store location with every secret in it masked, for messages and logs:
// a URL's password (postgres://user:pw@host), secret-bearing query parameters
// (?password=, ?sslpassword=, spelled in any case or percent-encoding), and in libpq's
// keyword/value form (host=db password='p w') the same keys' values, quoted or not. A
// directory comes back as it is. A URL whose parts are not certain (a password with an
// unescaped '/', '?', '#' or '@'; an '@' in a parameter) is masked up to its last '@', and
// a secret parameter up to the next '&': more than the password, never less. Paths such as sslkey's and passfile's are not secrets and stay readable.
func Redact(location string) string {
	const mask = "xxxxx"
	location = strings.TrimSpace(location) // as Open reads it
	if !urlScheme.MatchString(location) {
		return keywordSecret.ReplaceAllString(location, "${1}"+mask)
	}
	// pgx takes the userinfo to end at the first '@' that no '/' comes before, Go's parser
	// at the last '@' before the first '/', '?' or '#'. The URL's parts are certain when
	// there is no '#' and no '@' but one that both take to end the userinfo.
	scheme, rest, _ := strings.Cut(location, "://")
	i := strings.IndexAny(rest, "@/")
	pgxUser := i >= 0 && rest[i] == '@'
	ats := strings.Count(location, "@")
	if u, err := url.Parse(location); err == nil && u.Opaque == "" && !strings.Contains(location, "#") &&
		(ats == 0 || ats == 1 && pgxUser && u.User != nil) {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), mask)
		}
		u.RawQuery = redactQuery(u.RawQuery, mask)
		return u.String()
	}
	// Where the userinfo and the query start is a guess: mask every secret-named
	// parameter, then everything between the scheme and the last '@' but the user's name.
	rest = redactQuery(rest, mask)
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if user, _, has := strings.Cut(rest[:at], ":"); has {
			rest = user + ":" + mask + rest[at:]
		}
	}
	return scheme + "://" + rest
}

// urlScheme is a location in URL form; anything else is a directory or a keyword/value
// connection string.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// keywordSecret is a secret's keyword and value in libpq's keyword/value form: the value
// single-quoted with backslash escapes (an unterminated quote runs to the end), or bare up
// to white space.
var keywordSecret = regexp.MustCompile(`(?i)(\b[a-z_]*(?:password|passwd|pwd|secret|token)[a-z_]*\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|(?:[^\s\\]|\\.)+)`)

// redactQuery masks the values of a URL query's secret-named parameters up to the next
// '&', as pgx reads them, keeping every other parameter as written. A key is secret when
// its name holds a secret's word (secretKey), so in a URL that does not parse the first
// parameter is found with whatever precedes it.
func redactQuery(query, mask string) string {
	pairs := strings.Split(query, "&")
	for i, pair := range pairs {
		if key, _, has := strings.Cut(pair, "="); has && secretKey(key) {
			pairs[i] = key + "=" + mask
		}
	}
	return strings.Join(pairs, "&")
}

// secretKey says whether a connection parameter, percent-encoded or not, holds a secret:
// libpq's password and sslpassword, and any other key that names a password, secret or
// token.
func secretKey(raw string) bool {
	key, err := url.QueryUnescape(raw)
	if err != nil {
		key = raw
	}
	key = strings.ToLower(strings.TrimSpace(key))
	for _, word := range []string{"password", "passwd", "pwd", "secret", "token"} {
		if strings.Contains(key, word) {
			return true
		}
	}
	return false
}

// OpenPostgres connects to the database at the URL (libpq's form; PGPASSWORD and the other
// PG* variables fill in what it leaves out), checks that it answers and brings cosci's
// schema up to date.
func OpenPostgres(ctx context.Context, databaseURL string) (*Postgres, error) {
	p, err := connectPostgres(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	if _, err := p.Migrate(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// connectPostgres opens the pool and checks that the database answers.
func connectPostgres(ctx context.Context, databaseURL string) (*Postgres, error) {
	where := Redact(databaseURL)
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("store: %s is not a PostgreSQL URL (%v); give one such as postgres://cosci@db.example:5432/cosci, with the password in PGPASSWORD", where, errors.Unwrap(err))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: cannot connect to PostgreSQL at %s: %w", where, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: cannot reach PostgreSQL at %s: %v; start the database, or correct COSCI_STORE (--store) and PGPASSWORD", where, err)
	}
	return &Postgres{pool: pool, location: where}, nil
}

// migrations are cosci's schema, one step per version, applied in order and never edited
// once released: a change is a new step.
var migrations = []string{
	1: `
CREATE TABLE cosci_records (
	session_id text NOT NULL,
	key        text NOT NULL,
	data       bytea NOT NULL,
	written_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (session_id, key)
);
CREATE TABLE cosci_events (
	session_id text NOT NULL,
	seq        bigint NOT NULL,
	event      jsonb NOT NULL,
	PRIMARY KEY (session_id, seq)
);
CREATE TABLE cosci_sessions (
	session_id        text PRIMARY KEY,
	parent_id         text,
	conversation_id   text NOT NULL,
	session_type      text NOT NULL,
	relation          text,
	status            text NOT NULL,
	stop_reason       text,
	goal              text NOT NULL,
	scientist_id      text,
	hypotheses        integer NOT NULL,
	prompt_tokens     bigint NOT NULL,
	completion_tokens bigint NOT NULL,
	requests          bigint NOT NULL,
	cost_usd          double precision NOT NULL,
	duration_seconds  double precision NOT NULL,
	checkpoint        integer NOT NULL,
	created_at        timestamptz,
	updated_at        timestamptz,
	archived_at       timestamptz
);
CREATE INDEX cosci_sessions_conversation ON cosci_sessions (conversation_id);
CREATE INDEX cosci_sessions_parent ON cosci_sessions (parent_id);
`,
}

// migrationLock is the advisory lock key that serialises schema changes across workers
// ("cosci" in ASCII).
const migrationLock = 0x636f736369

// Migrate brings the schema up to date and returns the versions it applied. Workers call
// it at start, several at once: each takes a transaction-scoped advisory lock, so one
// applies the missing steps and the others find them applied. A plain table and a lock do
// what a migration library would, for a schema of three tables.
func (p *Postgres) Migrate(ctx context.Context) (applied []int, err error) {
	err = pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS cosci_schema (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM cosci_schema`).Scan(&current); err != nil {
			return err
		}
		if current >= len(migrations) {
			return fmt.Errorf("the database's schema is version %d, newer than this program's %d: upgrade cosci", current, len(migrations)-1)
		}
		for v := current + 1; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("schema version %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO cosci_schema (version) VALUES ($1)`, v); err != nil {
				return err
			}
			applied = append(applied, v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: cannot set up cosci's tables in %s: %w", p.location, err)
	}
	return applied, nil
}

// Close closes the pool.
func (p *Postgres) Close() { p.pool.Close() }

// Where names the database and the record.
func (p *Postgres) Where(sessionID, key string) string {
	return fmt.Sprintf("%s (session %s, record %s)", p.location, sessionID, key)
}

// Get reads a record.
func (p *Postgres) Get(ctx context.Context, sessionID, key string) ([]byte, error) {
	var data []byte
	err := p.pool.QueryRow(ctx, `SELECT data FROM cosci_records WHERE session_id = $1 AND key = $2`, sessionID, key).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: %s: %w", p.Where(sessionID, key), errNoRecord)
	}
	if err != nil {
		return nil, fmt.Errorf("store: read %s: %w", p.Where(sessionID, key), err)
	}
	return data, nil
}

// GetMany reads several records of a session in one query: the pieces of a turn's
// prompt. A missing record is absent from the map.
func (p *Postgres) GetMany(ctx context.Context, sessionID string, keys []string) (map[string][]byte, error) {
	rows, err := p.pool.Query(ctx, `SELECT key, data FROM cosci_records WHERE session_id = $1 AND key = ANY($2)`, sessionID, keys)
	if err != nil {
		return nil, fmt.Errorf("store: read %d records of session %s in %s: %w", len(keys), sessionID, p.location, err)
	}
	found := make(map[string][]byte, len(keys))
	var (
		key  string
		data []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&key, &data}, func() error {
		found[key] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read %d records of session %s in %s: %w", len(keys), sessionID, p.location, err)
	}
	return found, nil
}

// List lists the keys directly under dir.
func (p *Postgres) List(ctx context.Context, sessionID, dir string) ([]string, error) {
	rows, err := p.pool.Query(ctx, `
		SELECT key FROM cosci_records
		WHERE session_id = $1 AND starts_with(key, $2) AND strpos(substr(key, length($2) + 1), '/') = 0
		ORDER BY key COLLATE "C"`, sessionID, dir)
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", p.Where(sessionID, dir), err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", p.Where(sessionID, dir), err)
	}
	return keys, nil
}

// Put writes a record.
func (p *Postgres) Put(ctx context.Context, sessionID, key string, data []byte, once bool) error {
	q := `INSERT INTO cosci_records (session_id, key, data) VALUES ($1, $2, $3)
		ON CONFLICT (session_id, key) DO UPDATE SET data = EXCLUDED.data, written_at = now()`
	if once {
		q = `INSERT INTO cosci_records (session_id, key, data) VALUES ($1, $2, $3)
			ON CONFLICT (session_id, key) DO NOTHING`
	}
	if data == nil {
		data = []byte{} // an empty record is a record: bytea NOT NULL, not NULL
	}
	if _, err := p.pool.Exec(ctx, q, sessionID, key, data); err != nil {
		return fmt.Errorf("store: write %s: %w", p.Where(sessionID, key), err)
	}
	return nil
}

// Copy copies records inside the database, in one statement.
func (p *Postgres) Copy(ctx context.Context, from, to string, keys []string) error {
	_, err := p.pool.Exec(ctx, `
		INSERT INTO cosci_records (session_id, key, data)
		SELECT $2, key, data FROM cosci_records WHERE session_id = $1 AND key = ANY($3)
		ON CONFLICT (session_id, key) DO NOTHING`, from, to, keys)
	if err != nil {
		return fmt.Errorf("store: copy %d records of session %s to %s in %s: %w", len(keys), from, to, p.location, err)
	}
	return nil
}

// Commit writes the events, the record and the index row in one transaction.
func (p *Postgres) Commit(ctx context.Context, c Commit) error {
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if len(c.Events) > 0 {
			if err := appendEventsTx(ctx, tx, c.SessionID, c.Events); err != nil {
				return err
			}
		}
		if c.Key != "" {
			if _, err := tx.Exec(ctx, `INSERT INTO cosci_records (session_id, key, data) VALUES ($1, $2, $3)
				ON CONFLICT (session_id, key) DO NOTHING`, c.SessionID, c.Key, c.Data); err != nil {
				return err
			}
		}
		if c.Index != nil {
			return upsertIndex(ctx, tx, *c.Index)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: commit to session %s in %s: %w", c.SessionID, p.location, err)
	}
	return nil
}

// appendEventsTx appends the events whose Seq is above the log's last. The session's
// advisory lock makes concurrent attempts take turns.
func appendEventsTx(ctx context.Context, tx pgx.Tx, sessionID string, events []session.Event) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, sessionID); err != nil {
		return err
	}
	var last *int64
	if err := tx.QueryRow(ctx, `SELECT max(seq) FROM cosci_events WHERE session_id = $1`, sessionID).Scan(&last); err != nil {
		return err
	}
	var seqs []int64
	var bodies []string
	for _, e := range events {
		if last != nil && int64(e.Seq) <= *last {
			continue // already logged by an earlier attempt
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode event %d: %w", e.Seq, err)
		}
		seqs = append(seqs, int64(e.Seq))
		bodies = append(bodies, string(b))
		v := int64(e.Seq)
		last = &v
	}
	if len(seqs) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO cosci_events (session_id, seq, event)
		SELECT $1, s, e::jsonb FROM unnest($2::bigint[], $3::text[]) AS t(s, e)`, sessionID, seqs, bodies)
	return err
}

// upsertIndex writes a session's index row unless the index holds a later checkpoint; an
// archive time, once set, stays.
func upsertIndex(ctx context.Context, tx pgx.Tx, r Summary) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO cosci_sessions (session_id, parent_id, conversation_id, session_type, status, stop_reason,
			goal, scientist_id, hypotheses, prompt_tokens, completion_tokens, requests, cost_usd,
			duration_seconds, checkpoint, created_at, updated_at, archived_at, relation)
		VALUES ($1, NULLIF($2, ''), $3, $4, $5, NULLIF($6, ''), $7, NULLIF($8, ''), $9, $10, $11, $12, $13, $14, $15,
			NULLIF($16, '')::timestamptz, NULLIF($17, '')::timestamptz, NULLIF($18, '')::timestamptz, NULLIF($19, ''))
		ON CONFLICT (session_id) DO UPDATE SET
			parent_id = EXCLUDED.parent_id, conversation_id = EXCLUDED.conversation_id,
			session_type = EXCLUDED.session_type, relation = EXCLUDED.relation, status = EXCLUDED.status, stop_reason = EXCLUDED.stop_reason,
			goal = EXCLUDED.goal, scientist_id = EXCLUDED.scientist_id, hypotheses = EXCLUDED.hypotheses,
			prompt_tokens = EXCLUDED.prompt_tokens, completion_tokens = EXCLUDED.completion_tokens,
			requests = EXCLUDED.requests, cost_usd = EXCLUDED.cost_usd, duration_seconds = EXCLUDED.duration_seconds,
			checkpoint = EXCLUDED.checkpoint, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
			archived_at = coalesce(cosci_sessions.archived_at, EXCLUDED.archived_at)
		WHERE cosci_sessions.checkpoint <= EXCLUDED.checkpoint`,
		r.SessionID, r.Parent, r.Conversation, string(r.Type), string(r.Status), r.StopReason,
		r.Goal, r.ScientistID, r.Hypotheses, r.PromptTokens, r.CompletionTokens, r.Requests, r.CostUSD,
		r.DurationSeconds, r.Checkpoint, r.Created, r.Updated, r.Archived, string(r.Relation))
	return err
}

// Events reads the session's log.
func (p *Postgres) Events(ctx context.Context, sessionID string) ([]session.Event, error) {
	rows, err := p.pool.Query(ctx, `SELECT event FROM cosci_events WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: read the event log of session %s in %s: %w", sessionID, p.location, err)
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (session.Event, error) {
		var e session.Event
		var b []byte
		if err := row.Scan(&b); err != nil {
			return e, err
		}
		if err := json.Unmarshal(b, &e); err != nil {
			return e, &DamagedError{SessionID: sessionID, Record: fmt.Sprintf("an event of the log in %s", p.location), Problem: err.Error()}
		}
		return e, nil
	})
	var damaged *DamagedError
	if errors.As(err, &damaged) {
		return nil, damaged
	}
	if err != nil {
		return nil, fmt.Errorf("store: read the event log of session %s in %s: %w", sessionID, p.location, err)
	}
	return events, nil
}

// Sessions reads the session index.
func (p *Postgres) Sessions(ctx context.Context) ([]Summary, error) {
	rows, err := p.pool.Query(ctx, `
		SELECT session_id, coalesce(parent_id, ''), conversation_id, session_type, status, coalesce(stop_reason, ''),
			goal, coalesce(scientist_id, ''), hypotheses, prompt_tokens, completion_tokens, requests, cost_usd,
			duration_seconds, checkpoint, created_at, updated_at, archived_at, coalesce(relation, '')
		FROM cosci_sessions`)
	if err != nil {
		return nil, fmt.Errorf("store: read the session index in %s: %w", p.location, err)
	}
	sums, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Summary, error) {
		var r Summary
		var created, updated, archived *time.Time
		err := row.Scan(&r.SessionID, &r.Parent, &r.Conversation, &r.Type, &r.Status, &r.StopReason,
			&r.Goal, &r.ScientistID, &r.Hypotheses, &r.PromptTokens, &r.CompletionTokens, &r.Requests, &r.CostUSD,
			&r.DurationSeconds, &r.Checkpoint, &created, &updated, &archived, &r.Relation)
		r.Created, r.Updated, r.Archived = stamp(created), stamp(updated), stamp(archived)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: read the session index in %s: %w", p.location, err)
	}
	return sums, nil
}

// stamp formats a time from the database the way every record in a session does.
func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return session.Stamp(*t)
}
