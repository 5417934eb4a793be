// Package temporalpg runs a real Temporal server on PostgreSQL for tests: the production
// shape (persistence and visibility in PostgreSQL, the schema set up by Temporal's own SQL
// tool), on loopback ports of its own, as a separate process a test may stop, kill and
// restart.
//
// It runs the binaries `make server-tools` builds from the Go module proxy (`make test`
// builds them too): bin/temporal-server and bin/temporal-sql-tool, with the schemas of the
// same server release copied into bin/temporal-schema. The PostgreSQL server comes from
// internal/pgtest.
package temporalpg

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/template"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/cosci-dev/cosci/internal/pgtest"
)

// The server release and its schema, shared with docker-compose.yml (worker/compose_test.go
// checks that the two agree).
const (
	// ServerVersion is the Temporal server release the Makefile builds (the one inside
	// Temporal CLI v1.5.1).
	ServerVersion = "1.29.1"
	// Plugin is the SQL plugin of persistence and visibility.
	Plugin = "postgres12"
	// SchemaDir is where the schemas of Plugin are, relative to the schema root
	// (bin/temporal-schema here, /etc/temporal/schema in the temporalio/admin-tools image).
	SchemaDir = "postgresql/v12"
	// PersistenceDB and VisibilityDB are the databases Start creates on the PostgreSQL server.
	PersistenceDB = "temporal"
	VisibilityDB  = "temporal_visibility"
	// Namespace is the namespace Start registers, with the search attributes.
	Namespace = "default"
)

// The binaries and schemas under the module's bin/ directory.
const (
	serverBinary  = "temporal-server"
	sqlToolBinary = "temporal-sql-tool"
	schemaRoot    = "temporal-schema"
	makeTarget    = "server-tools"
)

// Server is a Temporal server process on PostgreSQL.
type Server struct {
	dir     string // the server's directory: config/ and the log
	binary  string // bin/temporal-server
	address string // the frontend's host:port
	logPath string
	tls     *tls.Config // how this package's clients dial a TLS frontend; nil: plain

	mu   sync.Mutex
	proc *process // the running process; nil before the first start
}

// process is one run of the server binary.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

// Start sets up a Temporal server on pg and starts it: it creates the persistence and
// visibility databases (or reuses them, when a server ran on pg before), sets up or updates
// their schemas with Temporal's SQL tool, writes the server's config into dir (which must
// exist), starts bin/temporal-server, waits until its frontend answers, makes sure
// namespace "default" exists and registers searchAttributes there (name -> type: Keyword,
// Int, Double, Text, Bool, Datetime or KeywordList), waiting until the server lists them.
// The server's output goes to a log file in dir (see Log). Without a deadline in ctx, Start
// gives up after startTimeout.
func Start(ctx context.Context, dir string, pg *pgtest.Server, searchAttributes map[string]string) (*Server, error) {
	return StartTLS(ctx, dir, pg, searchAttributes, nil)
}

// StartTLS is Start with the frontend serving TLS, with the files of t: mutual TLS, so
// that a client without a certificate the CA signed is refused. The server's system
// worker and this package's own clients present t's client certificate.
func StartTLS(ctx context.Context, dir string, pg *pgtest.Server, searchAttributes map[string]string, t *TLS) (*Server, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	types, err := indexedValueTypes(searchAttributes)
	if err != nil {
		return nil, err
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	for _, name := range []string{serverBinary, sqlToolBinary, filepath.Join(schemaRoot, SchemaDir)} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("temporalpg: no %s: run `make %s` (or `make test`, which builds it) in %s first", filepath.Join(bin, name), makeTarget, filepath.Dir(bin))
		}
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("temporalpg: %w", err)
	}

	for _, db := range []struct{ name, schema string }{
		{PersistenceDB, "temporal"},
		{VisibilityDB, "visibility"},
	} {
		if err := createDatabase(ctx, pg, db.name); err != nil {
			return nil, err
		}
		versioned := filepath.Join(bin, schemaRoot, SchemaDir, db.schema, "versioned")
		if err := sqlTool(ctx, filepath.Join(bin, sqlToolBinary), pg, db.name, "setup-schema", "-v", "0.0"); err != nil {
			return nil, err
		}
		if err := sqlTool(ctx, filepath.Join(bin, sqlToolBinary), pg, db.name, "update-schema", "-d", versioned); err != nil {
			return nil, err
		}
	}

	ports, err := freePorts(9)
	if err != nil {
		return nil, err
	}
	cfg := config{
		Plugin:        Plugin,
		PGAddress:     net.JoinHostPort("127.0.0.1", strconv.Itoa(pg.Port)),
		PGUser:        pgtest.User,
		PersistenceDB: PersistenceDB,
		VisibilityDB:  VisibilityDB,
		FrontendGRPC:  ports[0], FrontendHTTP: ports[1], FrontendMembership: ports[2],
		HistoryGRPC: ports[3], HistoryMembership: ports[4],
		MatchingGRPC: ports[5], MatchingMembership: ports[6],
		WorkerGRPC: ports[7], WorkerMembership: ports[8],
		DynamicConfig: filepath.Join(dir, "config", "dynamicconfig.yaml"),
		TLS:           t,
	}
	if err := cfg.write(filepath.Join(dir, "config")); err != nil {
		return nil, err
	}

	var clientTLS *tls.Config
	if t != nil {
		if clientTLS, err = t.clientConfig(); err != nil {
			return nil, err
		}
	}
	s := &Server{
		tls:     clientTLS,
		dir:     dir,
		binary:  filepath.Join(bin, serverBinary),
		address: net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.FrontendGRPC)),
		logPath: filepath.Join(dir, "temporal-server.log"),
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	if err := s.setUpNamespace(ctx, types); err != nil {
		_ = s.Kill()
		return nil, s.withLog(err)
	}
	return s, nil
}

// Address is the frontend's host:port, for client.Options.HostPort and TEMPORAL_ADDRESS.
func (s *Server) Address() string { return s.address }

// Log is what the server wrote (all its runs), for a failed test to show.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
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

// setUpNamespace registers namespace "default" unless it exists, then the search attributes
// the namespace lacks, and waits until the server lists them all.
func (s *Server) setUpNamespace(ctx context.Context, types map[string]enumspb.IndexedValueType) error {
	c, err := s.dial(ctx, Namespace)
	if err != nil {
		return fmt.Errorf("temporalpg: %w", err)
	}
	defer c.Close()
	ws := c.WorkflowService()
	if _, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: Namespace}); err != nil {
		var notFound *serviceerror.NamespaceNotFound
		if !errors.As(err, &notFound) {
			return fmt.Errorf("temporalpg: describe namespace %s: %w", Namespace, err)
		}
		_, err := ws.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace:                        Namespace,
			WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
		})
		var exists *serviceerror.NamespaceAlreadyExists
		if err != nil && !errors.As(err, &exists) {
			return fmt.Errorf("temporalpg: register namespace %s: %w", Namespace, err)
		}
	}
	if err := s.waitNamespace(ctx); err != nil {
		return err
	}

	ops := c.OperatorService()
	missing := func() (map[string]enumspb.IndexedValueType, error) {
		resp, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: Namespace})
		if err != nil {
			return nil, err
		}
		out := map[string]enumspb.IndexedValueType{}
		for name, typ := range types {
			have, ok := resp.GetCustomAttributes()[name]
			if !ok {
				out[name] = typ
			} else if have != typ {
				return nil, serviceerror.NewInvalidArgumentf("search attribute %s is registered as %s, not %s", name, have, typ)
			}
		}
		return out, nil
	}
	for {
		want, err := missing()
		if err == nil && len(want) == 0 {
			return nil
		}
		if err == nil {
			_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
				Namespace:        Namespace,
				SearchAttributes: want,
			})
			var exists *serviceerror.AlreadyExists
			if errors.As(err, &exists) {
				err = nil
			}
		}
		var invalid *serviceerror.InvalidArgument // a wrong type, or too many of one type for SQL visibility
		if errors.As(err, &invalid) {
			return fmt.Errorf("temporalpg: register search attributes %v: %w", slices.Sorted(maps.Keys(types)), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporalpg: the search attributes did not appear: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitNamespace waits until the frontend describes namespace "default" (the namespace
// registry refreshes from the database every few seconds).
func (s *Server) waitNamespace(ctx context.Context) error {
	c, err := s.dial(ctx, Namespace)
	if err != nil {
		return fmt.Errorf("temporalpg: %w", err)
	}
	defer c.Close()
	for {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: Namespace})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporalpg: namespace %s did not answer: %w (last error: %v)", Namespace, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// withLog adds the end of the server's log to an error.
func (s *Server) withLog(err error) error {
	log := s.Log()
	const tail = 4000
	if len(log) > tail {
		log = "..." + log[len(log)-tail:]
	}
	return fmt.Errorf("%w\nserver log (%s):\n%s", err, s.logPath, log)
}

// indexedValueTypes maps search attribute types by name ("Keyword") to the API's enum.
func indexedValueTypes(attrs map[string]string) (map[string]enumspb.IndexedValueType, error) {
	out := make(map[string]enumspb.IndexedValueType, len(attrs))
	for name, typ := range attrs {
		v, err := enumspb.IndexedValueTypeFromString(typ)
		if err != nil || v == enumspb.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return nil, fmt.Errorf("temporalpg: search attribute %s has type %q; want Keyword, Int, Double, Text, Bool, Datetime or KeywordList", name, typ)
		}
		out[name] = v
	}
	return out, nil
}

// binDir finds bin/ at the module root: the nearest directory above the working directory
// with a go.mod.
func binDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("temporalpg: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("temporalpg: no go.mod above %s: run the tests inside the cosci module, after `make %s`", dir, makeTarget)
		}
		dir = parent
	}
}

// createDatabase creates a database on pg unless it exists.
func createDatabase(ctx context.Context, pg *pgtest.Server, name string) error {
	if _, err := pg.CreateDatabase(ctx, name); err != nil && !strings.Contains(err.Error(), "SQLSTATE 42P04") { // duplicate_database
		return fmt.Errorf("temporalpg: %w", err)
	}
	return nil
}

// sqlTool runs temporal-sql-tool against one database of pg.
func sqlTool(ctx context.Context, tool string, pg *pgtest.Server, db string, args ...string) error {
	cmd := exec.CommandContext(ctx, tool, append([]string{
		"--endpoint", "127.0.0.1", "--port", strconv.Itoa(pg.Port), "--user", pgtest.User,
		"--plugin", Plugin, "--database", db,
	}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("temporalpg: temporal-sql-tool %s on database %s: %w\n%s", args[0], db, err, out.String())
	}
	return nil
}

// freePorts finds n distinct free loopback ports below 32768: Temporal keeps its members'
// ports in a smallint column (cluster_membership.rpc_port), so the kernel's ephemeral ports
// (32768 and up on Linux) do not fit.
func freePorts(n int) ([]int, error) {
	const low, high = 20000, 32767
	var ports []int
	var listeners []io.Closer
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for try := 0; len(ports) < n; try++ {
		if try == 1000 {
			return nil, fmt.Errorf("temporalpg: no %d free ports between %d and %d", n, low, high)
		}
		port := low + rand.IntN(high-low+1)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // in use
		}
		listeners = append(listeners, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// config is the server's configuration: config/development-postgres12.yaml of the server
// module, on free loopback ports, without archival, metrics or pprof.
type config struct {
	Plugin, PGAddress, PGUser, PersistenceDB, VisibilityDB string

	FrontendGRPC, FrontendHTTP, FrontendMembership int
	HistoryGRPC, HistoryMembership                 int
	MatchingGRPC, MatchingMembership               int
	WorkerGRPC, WorkerMembership                   int

	DynamicConfig string
	TLS           *TLS // nil: the frontend serves plain gRPC
}

// write writes the config as <dir>/temporalpg.yaml (the server's --env temporalpg) and its
// dynamic config.
func (c config) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("temporalpg: %w", err)
	}
	for file, tmpl := range map[string]*template.Template{
		"temporalpg.yaml":    serverConfig,
		"dynamicconfig.yaml": dynamicConfig,
	} {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, c); err != nil {
			return fmt.Errorf("temporalpg: %s: %w", file, err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("temporalpg: %w", err)
		}
	}
	return nil
}

var serverConfig = template.Must(template.New("temporalpg.yaml").Parse(`# Written by cosci's e2e/temporalpg: config/development-postgres12.yaml of
# go.temporal.io/server, on free loopback ports.
log:
  stdout: true
  level: info

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:
      sql:
        pluginName: "{{.Plugin}}"
        databaseName: "{{.PersistenceDB}}"
        connectAddr: "{{.PGAddress}}"
        connectProtocol: "tcp"
        user: "{{.PGUser}}"
        password: ""
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: "1h"
    postgres-visibility:
      sql:
        pluginName: "{{.Plugin}}"
        databaseName: "{{.VisibilityDB}}"
        connectAddr: "{{.PGAddress}}"
        connectProtocol: "tcp"
        user: "{{.PGUser}}"
        password: ""
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: "1h"

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
{{- with .TLS}}
  tls:
    frontend:
      server:
        certFile: "{{.CertFile}}"
        keyFile: "{{.KeyFile}}"
        requireClientAuth: true
        clientCaFiles: ["{{.CAFile}}"]
      client:
        serverName: "{{.ServerName}}"
        rootCaFiles: ["{{.CAFile}}"]
    systemWorker:
      certFile: "{{.ClientCertFile}}"
      keyFile: "{{.ClientKeyFile}}"
      client:
        serverName: "{{.ServerName}}"
        rootCaFiles: ["{{.CAFile}}"]
{{- end}}

services:
  frontend:
    rpc:
      grpcPort: {{.FrontendGRPC}}
      membershipPort: {{.FrontendMembership}}
      bindOnLocalHost: true
      httpPort: {{.FrontendHTTP}}
  matching:
    rpc:
      grpcPort: {{.MatchingGRPC}}
      membershipPort: {{.MatchingMembership}}
      bindOnLocalHost: true
  history:
    rpc:
      grpcPort: {{.HistoryGRPC}}
      membershipPort: {{.HistoryMembership}}
      bindOnLocalHost: true
  worker:
    rpc:
      grpcPort: {{.WorkerGRPC}}
      membershipPort: {{.WorkerMembership}}
      bindOnLocalHost: true

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:{{.FrontendGRPC}}"
      httpAddress: "127.0.0.1:{{.FrontendHTTP}}"

dcRedirectionPolicy:
  policy: "noop"

archival:
  history:
    state: "disabled"
  visibility:
    state: "disabled"

namespaceDefaults:
  archival:
    history:
      state: "disabled"
    visibility:
      state: "disabled"

dynamicConfigClient:
  filepath: "{{.DynamicConfig}}"
  pollInterval: "10s"
`))

// dynamicConfig: config/dynamicconfig/development-sql.yaml's limits and the dev server's
// (the CLI's start-dev) cache and visibility rates, with search attributes read through the
// cache so that a test sees them as soon as they are registered.
var dynamicConfig = template.Must(template.New("dynamicconfig.yaml").Parse(`limit.maxIDLength:
  - value: 255
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
history.hostLevelCacheMaxSize:
  - value: 8096
frontend.namespaceRPS.visibility:
  - value: 100
component.nexusoperations.callback.endpoint.template:
  - value: http://127.0.0.1:{{.FrontendHTTP}}/namespaces/{{"{{"}}.NamespaceName{{"}}"}}/nexus/callback
component.callbacks.allowedAddresses:
  - value:
      - Pattern: "127.0.0.1:{{.FrontendHTTP}}"
        AllowInsecure: true
`))
