package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Revocations keeps what takes sign-ins away, where every desk of a lab reads it (the
// session store): the sign-ins signed out, and for a person the moment before which all
// their sign-ins end ("sign out everywhere").
type Revocations interface {
	// SignedOut says whether the sign-in sid has been signed out.
	SignedOut(ctx context.Context, sid string) (bool, error)
	// SignOut records that sign-in sid of person is signed out; the record may be dropped
	// after until, when the sign-in would have ended anyway.
	SignOut(ctx context.Context, person, sid string, until time.Time) error
	// SignedOutBefore is the moment before which every sign-in of person ends; zero for
	// none.
	SignedOutBefore(ctx context.Context, person string) (time.Time, error)
	// SignOutEverywhere ends every sign-in of person begun before at, by whom.
	SignOutEverywhere(ctx context.Context, person, by string, at time.Time) error
}

// revocationCache is Revocations as one desk asks them: each answer believed for ttl, so
// that a request costs the store nothing most of the time and a sign-out elsewhere holds
// here within ttl. What this desk itself revokes holds here at once. A store that does not
// answer signs nobody out: the cookie's own expiry still holds, and refusing everyone
// while the store is down would take the desk away from the people who need it to see
// what is wrong. It is logged.
type revocationCache struct {
	r   Revocations
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	sids    map[string]cached[bool]
	persons map[string]cached[time.Time]
}

type cached[T any] struct {
	v  T
	at time.Time
}

func newRevocationCache(r Revocations, ttl time.Duration, now func() time.Time) *revocationCache {
	return &revocationCache{r: r, ttl: ttl, now: now, sids: map[string]cached[bool]{}, persons: map[string]cached[time.Time]{}}
}

// revoked says whether the sign-in sid of person, begun at issued, has been taken away.
func (c *revocationCache) revoked(ctx context.Context, person, sid string, issued time.Time) bool {
	out, err := lookup(c, c.sids, sid, func() (bool, error) { return c.r.SignedOut(ctx, sid) })
	if err != nil {
		slog.Warn("desk: cannot read the sign-outs", "err", err)
	}
	if out {
		return true
	}
	before, err := lookup(c, c.persons, person, func() (time.Time, error) { return c.r.SignedOutBefore(ctx, person) })
	if err != nil {
		slog.Warn("desk: cannot read the sign-outs", "err", err)
	}
	return !before.IsZero() && issued.Before(before)
}

// lookup answers from the cache while it is fresh, else asks.
func lookup[T any](c *revocationCache, m map[string]cached[T], key string, ask func() (T, error)) (T, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := m[key]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.v, nil
	}
	v, err := ask()
	if err != nil {
		return e.v, err
	}
	c.mu.Lock()
	m[key] = cached[T]{v, now}
	if len(m) > maxCached {
		for k, old := range m { // drop what is stale; the store still has it
			if now.Sub(old.at) >= c.ttl {
				delete(m, k)
			}
		}
	}
	c.mu.Unlock()
	return v, nil
}

// maxCached bounds each of the cache's maps before stale entries are swept.
const maxCached = 10000

func (c *revocationCache) signOut(ctx context.Context, person, sid string, until time.Time) error {
	if err := c.r.SignOut(ctx, person, sid, until); err != nil {
		return err
	}
	c.mu.Lock()
	c.sids[sid] = cached[bool]{true, c.now()}
	c.mu.Unlock()
	return nil
}

func (c *revocationCache) signOutEverywhere(ctx context.Context, person, by string) error {
	at := c.now()
	if err := c.r.SignOutEverywhere(ctx, person, by, at); err != nil {
		return err
	}
	c.mu.Lock()
	c.persons[person] = cached[time.Time]{at, at}
	c.mu.Unlock()
	return nil
}
