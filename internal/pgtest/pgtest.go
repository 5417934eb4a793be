// Package pgtest runs a private PostgreSQL server for tests: a fresh cluster in a temporary
// directory, built with the machine's own PostgreSQL binaries (Debian's postgresql
// package), listening on a free loopback port. Each test package gets a server of its own,
// so a test may stop, kill or restart it without disturbing any other; nothing is left
// behind when it stops.
//
// Run as root (as CI does), the server runs as the postgres user, which PostgreSQL
// requires; otherwise it runs as the current user.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// User is the superuser of every test cluster; it logs in without a password (trust
// authentication, loopback only).
const User = "cosci"

// Server is a private PostgreSQL server.
type Server struct {
	Dir  string // the cluster's directory: data/, the socket and the log
	Port int
	bin  string // PostgreSQL's bin directory
	as   string // the user the server runs as ("" for the current one)
}

// binDir finds the server binaries: pg_config's bindir, or Debian's versioned directory.
func binDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	return "", errors.New("pgtest: no PostgreSQL server binaries (initdb) on this machine: install Debian's postgresql package (apt-get install postgresql), which the tests of the PostgreSQL store and of Temporal on PostgreSQL need")
}

// Start creates a cluster under dir (which must exist and be empty) and starts it. With dir
// "", it makes a directory of its own in the system's temporary directory, which Close
// removes. Run as root, the postgres user must be able to reach dir: a directory under a
// private temporary directory (such as t.TempDir's) will not do.
func Start(dir string) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "cosci-pg-"); err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	s := &Server{Dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgtest: running as root, and there is no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
		s.as = "postgres"
	}
	if out, err := s.run(filepath.Join(bin, "initdb"), "-D", s.data(), "-U", User,
		"--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	if s.Port, err = freePort(); err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

// run runs a PostgreSQL program as the server's user.
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(prog, args...)
	if s.as != "" {
		cmd = exec.Command("runuser", append([]string{"-u", s.as, "--", prog}, args...)...)
	}
	return cmd.CombinedOutput()
}

// Start starts the server (again, after Stop or Kill) and waits until it accepts
// connections. Tests need no durability across a machine crash, so the server does not
// fsync; PGTEST_FSYNC=on makes it, for benchmarks of what a durable write costs.
func (s *Server) Start() error {
	fsync := "off"
	if os.Getenv("PGTEST_FSYNC") == "on" {
		fsync = "on"
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=%s -c max_connections=300", s.Port, s.Dir, fsync)
	if out, err := s.run(filepath.Join(s.bin, "pg_ctl"), "-D", s.data(), "-o", opts,
		"-l", filepath.Join(s.Dir, "server.log"), "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pgtest: start the server: %w\n%s\n%s", err, out, s.Log())
	}
	return nil
}

// Stop shuts the server down (fast mode: open connections are cut) and waits for it.
func (s *Server) Stop() error {
	if out, err := s.run(filepath.Join(s.bin, "pg_ctl"), "-D", s.data(), "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pgtest: stop the server: %w\n%s", err, out)
	}
	return nil
}

// Kill ends the server at once, as a crash would (immediate mode: no checkpoint, recovery
// on the next start).
func (s *Server) Kill() error {
	if out, err := s.run(filepath.Join(s.bin, "pg_ctl"), "-D", s.data(), "-m", "immediate", "-w", "stop"); err != nil {
		return fmt.Errorf("pgtest: kill the server: %w\n%s", err, out)
	}
	return nil
}

// Log returns the server's log, for a failed test to show.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	return string(b)
}

// URL is the connection URL of one database on the server.
func (s *Server) URL(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(User),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// CreateDatabase creates an empty database and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Close stops the server, if it runs, and removes its directory.
func (s *Server) Close() error {
	if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err == nil {
		if err := s.Stop(); err != nil {
			return err
		}
	}
	return os.RemoveAll(s.Dir)
}
