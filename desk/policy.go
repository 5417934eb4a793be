package main

// The roles policy (--policy), read again when its file changes: an admin who edits it
// demotes or promotes people at the next page, without restarting the desk.

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
)

// policyCheck is how often, at most, the policy file is looked at (its size and time).
const policyCheck = time.Second

// policy is the desk's roles: the policy file's, and the groups given by flag.
type policy struct {
	file                    string
	adminGroup, scientGroup string
	log                     *slog.Logger
	now                     func() time.Time

	mu      sync.Mutex
	current access.Policy
	checked time.Time
	size    int64
	mod     time.Time
	digest  [sha256.Size]byte
}

// newPolicy reads the policy file (if any) once, refusing a file it cannot read or parse.
func newPolicy(file, adminGroup, scientistGroup string, log *slog.Logger) (*policy, error) {
	p := &policy{file: file, adminGroup: adminGroup, scientGroup: scientistGroup, log: log, now: time.Now}
	if err := p.load(); err != nil {
		return nil, err
	}
	return p, nil
}

// Roles are the roles of an identity with these groups, under the policy as its file is
// now (looked at once a second at most).
func (p *policy) Roles(id string, groups []string) []access.Role {
	p.mu.Lock()
	if p.file != "" && p.now().Sub(p.checked) >= policyCheck {
		if err := p.reload(); err != nil {
			// The file as it was stays the policy: a typo must not take everyone's
			// roles away, nor give any. The operator reads why in the log.
			p.log.Error("desk: the policy file changed but cannot be read; the earlier policy holds", "file", p.file, "err", err)
		}
	}
	pol := p.current
	p.mu.Unlock()
	return pol.Roles(id, groups)
}

// load reads the policy for the first time.
func (p *policy) load() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.file == "" {
		p.current = p.withGroups(access.Policy{})
		return nil
	}
	return p.reload()
}

// reload reads the file again if its size, time or contents changed; p.mu is held.
func (p *policy) reload() error {
	p.checked = p.now()
	info, err := os.Stat(p.file)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if info.Size() == p.size && info.ModTime().Equal(p.mod) && !p.mod.IsZero() {
		return nil
	}
	b, err := os.ReadFile(p.file)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	p.size, p.mod = info.Size(), info.ModTime()
	sum := sha256.Sum256(b)
	if sum == p.digest {
		return nil
	}
	pol, err := access.ParsePolicy(b)
	if err != nil {
		return fmt.Errorf("--policy %s: %w", p.file, err)
	}
	if p.digest != ([sha256.Size]byte{}) {
		p.log.Info("desk: the policy file changed; its roles hold from now", "file", p.file)
	}
	p.digest, p.current = sum, p.withGroups(pol)
	return nil
}

// withGroups adds the groups given by flag to a policy.
func (p *policy) withGroups(pol access.Policy) access.Policy {
	if p.adminGroup != "" {
		pol.Groups.Admin = append(pol.Groups.Admin, p.adminGroup)
	}
	if p.scientGroup != "" {
		pol.Groups.Scientist = append(pol.Groups.Scientist, p.scientGroup)
	}
	return pol
}
