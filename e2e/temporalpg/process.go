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

// process is one run of the server binary.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

// Stop shuts the server down gracefully (SIGTERM) and waits for it; after a minute it kills
// it. Stopping a server that does not run does nothing.
func (s *Server) Stop() error {
	p := s.running()
	if p == nil {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("temporalpg: stop the server: %w", err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
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
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("temporalpg: kill the server: %w", err)
	}
	<-p.done
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
func (s *Server) running() *process {
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
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("temporalpg: %w", err)
	}
	defer logFile.Close() // the child has its own copy
	fmt.Fprintf(logFile, "\n=== temporalpg: starting %s at %s\n", s.binary, time.Now().Format(time.RFC3339))
	cmd := exec.Command(s.binary, "--root", s.dir, "--config", "config", "--env", "temporalpg",
		"--allow-no-auth", "start")
	cmd.Dir = s.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("temporalpg: start %s: %w", s.binary, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
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
func (s *Server) waitFrontend(ctx context.Context, p *process) error {
	for {
		c, err := s.dial(ctx, Namespace)
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("temporalpg: the server exited while starting: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("temporalpg: the server's frontend at %s did not answer: %w (last error: %v)", s.address, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
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
