package temporalpg

// The server's process: started, stopped gracefully, killed as a crash would, restarted,
// and dialled once its frontend answers.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// Process is a server binary a test runs: its output appended to a log file, killed with
// the test's process (on Linux), its exit seen on Done. A Server's temporal-server runs in
// one, and so does e2e's dev server on a database file (soak_test.go).
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

// StartProcess runs binary with args in dir ("" for the test's working directory), its
// output appended to the file logPath after a line that says what started when.
func StartProcess(binary string, args []string, dir, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("temporalpg: %w", err)
	}
	defer logFile.Close() // the child has its own copy
	fmt.Fprintf(logFile, "\n=== temporalpg: starting %s at %s\n", binary, time.Now().Format(time.RFC3339))
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("temporalpg: start %s: %w", binary, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Signal sends sig to the process; one that has exited already is no error.
func (p *Process) Signal(sig os.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// Kill ends the process at once (SIGKILL) and waits until it has exited.
func (p *Process) Kill() error {
	if err := p.Signal(os.Kill); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Await calls ready every interval until it answers nil: the process serves. It gives up
// when the process exits, or with ready's last error when ctx ends.
func (p *Process) Await(ctx context.Context, interval time.Duration, ready func() error) error {
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("the process exited while starting: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(interval):
		}
	}
}

// Stop shuts the server down gracefully (SIGTERM) and waits for it; after a minute it kills
// it. Stopping a server that does not run does nothing.
func (s *Server) Stop() error {
	p := s.running()
	if p == nil {
		return nil
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("temporalpg: stop the server: %w", err)
	}
	select {
	case <-p.Done():
		return nil
	case <-time.After(time.Minute):
		_ = p.Kill()
		return errors.New("temporalpg: the server did not stop within a minute of SIGTERM; killed it")
	}
}

// Kill ends the server at once (SIGKILL), as a crash of its host would, and waits until it
// has exited.
func (s *Server) Kill() error {
	p := s.running()
	if p == nil {
		return nil
	}
	if err := p.Kill(); err != nil {
		return fmt.Errorf("temporalpg: kill the server: %w", err)
	}
	return nil
}

// Restart starts the server again with the same config, ports and databases (stopping it
// first if it still runs) and waits until its frontend answers.
func (s *Server) Restart(ctx context.Context) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := s.Stop(); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	// The namespace and search attributes are in the database; wait until the namespace
	// answers again, as after the first start.
	if err := s.waitNamespace(ctx); err != nil {
		_ = s.Kill()
		return s.withLog(err)
	}
	return nil
}

// startTimeout bounds Start and Restart when their context has no deadline.
const startTimeout = 2 * time.Minute

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, startTimeout)
}

// running returns the server's process if it has not exited.
func (s *Server) running() *Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	select {
	case <-s.proc.done:
		return nil
	default:
		return s.proc
	}
}

// start runs the server binary and waits until the frontend answers.
func (s *Server) start(ctx context.Context) error {
	p, err := StartProcess(s.binary, []string{"--root", s.dir, "--config", "config", "--env", "temporalpg",
		"--allow-no-auth", "start"}, s.dir, s.logPath)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()

	if err := s.waitFrontend(ctx, p); err != nil {
		_ = s.Kill()
		return s.withLog(err)
	}
	return nil
}

// waitFrontend waits until the frontend answers a health check, or the process exits.
func (s *Server) waitFrontend(ctx context.Context, p *Process) error {
	err := p.Await(ctx, 100*time.Millisecond, func() error {
		c, err := s.dial(ctx, Namespace)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	})
	if err != nil {
		return fmt.Errorf("temporalpg: the server's frontend at %s did not answer: %w", s.address, err)
	}
	return nil
}

// dial connects a client that logs nothing (a server that is starting refuses connections).
func (s *Server) dial(ctx context.Context, namespace string) (client.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return client.DialContext(dctx, client.Options{
		HostPort:          s.address,
		Namespace:         namespace,
		Logger:            sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
		ConnectionOptions: client.ConnectionOptions{TLS: s.tls},
	})
}
