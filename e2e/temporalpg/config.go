package temporalpg

// The server's configuration files, on free loopback ports.

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"text/template"
)

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
	// SQLiteFile, when set, holds persistence and visibility instead of PostgreSQL (the
	// dev server's shape, sqlite.go): one store, one connection, as the CLI's start-dev.
	SQLiteFile   string
	SQLiteMemory bool // SQLite in memory, shared by the store's connections: SQLiteFile only names it
	// MetricsPort, when set, serves the server's Prometheus metrics on loopback.
	MetricsPort int
	// DynamicValues are further dynamic config values: name -> a YAML value.
	DynamicValues map[string]string

	Services      []service // the frontend first
	DynamicConfig string
	TLS           *TLS // nil: the frontend serves plain gRPC
}

// service is one of the server's services on loopback ports of its own.
type service struct {
	Name             string
	GRPC, Membership int
	HTTP             int // the frontend's HTTP API; 0: none
}

// loopbackServices are the server's four services on free loopback ports, the frontend first.
func loopbackServices() ([]service, error) {
	ports, err := freePorts(9)
	if err != nil {
		return nil, err
	}
	return []service{
		{Name: "frontend", GRPC: ports[0], HTTP: ports[1], Membership: ports[2]},
		{Name: "matching", GRPC: ports[3], Membership: ports[4]},
		{Name: "history", GRPC: ports[5], Membership: ports[6]},
		{Name: "worker", GRPC: ports[7], Membership: ports[8]},
	}, nil
}

// Frontend is the service clients dial.
func (c config) Frontend() service { return c.Services[0] }

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
{{- if .SQLiteFile}}
  defaultStore: sqlite-default
  visibilityStore: sqlite-default
  numHistoryShards: 1
  datastores:
    sqlite-default:
      sql:
        pluginName: "sqlite"
        databaseName: "{{.SQLiteFile}}"
        connectAddr: "localhost"
        connectProtocol: "tcp"
        connectAttributes:
{{- if .SQLiteMemory}}
          mode: "memory"
          cache: "shared"
{{- else}}
          cache: "private"
          setup: true
          journal_mode: wal
          synchronous: 2
{{- end}}
        maxConns: 1
        maxIdleConns: 1
        maxConnLifetime: "1h"
{{- else}}
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
{{- end}}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
{{- with .MetricsPort}}
  metrics:
    prometheus:
      timerType: "histogram"
      listenAddress: "127.0.0.1:{{.}}"
{{- end}}
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
{{- range .Services}}
  {{.Name}}:
    rpc:
      grpcPort: {{.GRPC}}
      membershipPort: {{.Membership}}
      bindOnLocalHost: true
{{- with .HTTP}}
      httpPort: {{.}}
{{- end}}
{{- end}}

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
      rpcAddress: "127.0.0.1:{{.Frontend.GRPC}}"
      httpAddress: "127.0.0.1:{{.Frontend.HTTP}}"

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
  - value: http://127.0.0.1:{{.Frontend.HTTP}}/namespaces/{{"{{"}}.NamespaceName{{"}}"}}/nexus/callback
callback.allowedAddresses:
  - value:
      - Pattern: "127.0.0.1:{{.Frontend.HTTP}}"
        AllowInsecure: true
{{- range $name, $value := .DynamicValues}}
{{$name}}:
  - value: {{$value}}
{{- end}}
`))
