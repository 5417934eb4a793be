package main

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cosci-dev/cosci/e2e/temporalpg"
	"github.com/cosci-dev/cosci/workflows"
)

// composeService is the part of a docker-compose.yml service the tests read.
type composeService struct {
	Image       string            `yaml:"image"`
	Build       string            `yaml:"build"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Command     []string          `yaml:"command"`
	Ports       []string          `yaml:"ports"`
	Environment map[string]string `yaml:"environment"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test    []string `yaml:"test"`
		Disable bool     `yaml:"disable"`
	} `yaml:"healthcheck"`
	Restart  string   `yaml:"restart"`
	Volumes  []string `yaml:"volumes"`
	Profiles []string `yaml:"profiles"`
	Secrets  []string `yaml:"secrets"`
}

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
	Secrets  map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	var compose composeFile
	if err := yaml.Unmarshal(mustRead(t, "../docker-compose.yml"), &compose); err != nil {
		t.Fatalf("docker-compose.yml is not valid YAML: %v", err)
	}
	return compose
}

// The services docker-compose.yml runs besides the workers, and the one-shot jobs among them.
const (
	svcPostgres  = "postgres"
	svcSchema    = "temporal-schema"
	svcTemporal  = "temporal"
	svcNamespace = "temporal-namespace"
	svcUI        = "temporal-ui"
	svcProm      = "prometheus"
	svcGrafana   = "grafana"
	svcDesk      = "desk"    // the scientists' web page, the one service published to the lab
	svcStarter   = "starter" // the operators' command line: docker compose run --rm starter ...
)

var oneShot = []string{svcSchema, svcNamespace}

// passwordRef is how every password in docker-compose.yml is written: a reference to the
// environment that `docker compose` refuses to run without.
var passwordRef = regexp.MustCompile(`^\$\{(POSTGRES|GRAFANA_ADMIN)_PASSWORD:\?[^}]+\}$`)

// workers are the services that run the cosci image as it starts (the worker); the desk and
// the starter run the same image with another entrypoint.
func workers(compose composeFile) []string {
	var names []string
	for name, svc := range compose.Services {
		if svc.Build != "" && len(svc.Entrypoint) == 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TestComposeServices: docker-compose.yml is the production shape: PostgreSQL, the schema
// job, the Temporal server on PostgreSQL, the namespace job, the Web UI and two or more cosci
// workers, each with the environment it needs.
func TestComposeServices(t *testing.T) {
	compose := readCompose(t)
	for _, name := range []string{svcPostgres, svcSchema, svcTemporal, svcNamespace, svcUI, svcProm, svcGrafana, svcDesk, svcStarter} {
		if _, ok := compose.Services[name]; !ok {
			t.Fatalf("docker-compose.yml has no %s service (it has %v)", name, slices.Sorted(maps.Keys(compose.Services)))
		}
	}
	ws := workers(compose)
	if len(ws) < 2 {
		t.Errorf("docker-compose.yml builds %d cosci workers (%v); want two or more", len(ws), ws)
	}
	for name := range compose.Services {
		if !slices.Contains([]string{svcPostgres, svcSchema, svcTemporal, svcNamespace, svcUI, svcProm, svcGrafana, svcDesk, svcStarter}, name) && !slices.Contains(ws, name) {
			t.Errorf("unexpected service %s: add it to the checks of worker/compose_test.go", name)
		}
	}

	pg := compose.Services[svcPostgres]
	wantEnv(t, svcPostgres, pg, "POSTGRES_USER", "POSTGRES_DB", "POSTGRES_PASSWORD")
	user, db := pg.Environment["POSTGRES_USER"], pg.Environment["POSTGRES_DB"]

	// The schema job: the harness's plugin, databases and schema versions.
	schema := compose.Services[svcSchema]
	wantEnv(t, svcSchema, schema, "SQL_PLUGIN", "SQL_HOST", "SQL_PORT", "SQL_USER", "SQL_PASSWORD")
	if schema.Environment["SQL_PLUGIN"] != temporalpg.Plugin || schema.Environment["SQL_HOST"] != svcPostgres ||
		schema.Environment["SQL_PORT"] != "5432" || schema.Environment["SQL_USER"] != user {
		t.Errorf("%s connects with %v; want plugin %s, %s:5432 as %s", svcSchema, schema.Environment, temporalpg.Plugin, svcPostgres, user)
	}
	script := strings.Join(schema.Command, "\n")
	for _, d := range []struct{ db, dir string }{{temporalpg.PersistenceDB, "temporal"}, {temporalpg.VisibilityDB, "visibility"}} {
		for _, step := range []string{
			"--db " + d.db + " --quiet create",
			"--db " + d.db + " setup-schema -v 0.0",
			"--db " + d.db + " update-schema -d /etc/temporal/schema/" + temporalpg.SchemaDir + "/" + d.dir + "/versioned",
		} {
			if !strings.Contains(script, "temporal-sql-tool "+step) {
				t.Errorf("%s does not run temporal-sql-tool %s (e2e/temporalpg does the same)", svcSchema, step)
			}
		}
	}

	// The server: the harness's release, on both databases.
	server := compose.Services[svcTemporal]
	wantEnv(t, svcTemporal, server, "DB", "DB_PORT", "POSTGRES_SEEDS", "POSTGRES_USER", "POSTGRES_PWD", "DBNAME", "VISIBILITY_DBNAME", "NUM_HISTORY_SHARDS", "BIND_ON_IP")
	for key, want := range map[string]string{
		"DB": temporalpg.Plugin, "DB_PORT": "5432", "POSTGRES_SEEDS": svcPostgres, "POSTGRES_USER": user,
		"DBNAME": temporalpg.PersistenceDB, "VISIBILITY_DBNAME": temporalpg.VisibilityDB,
	} {
		if got := server.Environment[key]; got != want {
			t.Errorf("%s: %s=%q, want %q", svcTemporal, key, got, want)
		}
	}
	if len(server.Ports) > 0 {
		t.Errorf("%s publishes %v; want no port: the desk and the workers are the namespace's only clients, and operators run the starter inside the network", svcTemporal, server.Ports)
	}

	// The namespace job registers every search attribute the workflows set.
	ns := compose.Services[svcNamespace]
	wantEnv(t, svcNamespace, ns, "TEMPORAL_ADDRESS")
	if ns.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" {
		t.Errorf("%s: TEMPORAL_ADDRESS=%q", svcNamespace, ns.Environment["TEMPORAL_ADDRESS"])
	}
	script = strings.Join(ns.Command, "\n")
	if !strings.Contains(script, "temporal operator namespace create --namespace "+temporalpg.Namespace) {
		t.Errorf("%s does not create namespace %s", svcNamespace, temporalpg.Namespace)
	}
	if !strings.Contains(script, "temporal operator search-attribute create --namespace "+temporalpg.Namespace) {
		t.Errorf("%s does not create search attributes in namespace %s", svcNamespace, temporalpg.Namespace)
	}
	for name, typ := range workflows.SearchAttributes {
		if !strings.Contains(script, "--name "+name+" --type "+typ) {
			t.Errorf("%s does not register search attribute %s=%s", svcNamespace, name, typ)
		}
	}
	if got := strings.Count(script, "--name "); got != len(workflows.SearchAttributes) {
		t.Errorf("%s registers %d search attributes; the workflows set %d", svcNamespace, got, len(workflows.SearchAttributes))
	}

	ui := compose.Services[svcUI]
	wantEnv(t, svcUI, ui, "TEMPORAL_ADDRESS")
	if ui.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" || !slices.Equal(ui.Ports, []string{"127.0.0.1:8233:8080"}) {
		t.Errorf("%s: TEMPORAL_ADDRESS=%q, ports %v; want temporal:7233 and 127.0.0.1:8233:8080 (it can steer any session: the Docker host only)", svcUI, ui.Environment["TEMPORAL_ADDRESS"], ui.Ports)
	}

	// The workers: the server by service name, the session store on the postgres service.
	for _, name := range ws {
		w := compose.Services[name]
		wantEnv(t, name, w, "TEMPORAL_ADDRESS", "COSCI_STORE", "PGPASSWORD",
			"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
		if w.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" {
			t.Errorf("%s: TEMPORAL_ADDRESS=%q, want temporal:7233", name, w.Environment["TEMPORAL_ADDRESS"])
		}
		if ns := w.Environment["TEMPORAL_NAMESPACE"]; ns != "" && ns != temporalpg.Namespace {
			t.Errorf("%s: TEMPORAL_NAMESPACE=%q, but the namespace job sets up %s", name, ns, temporalpg.Namespace)
		}
		store, err := url.Parse(w.Environment["COSCI_STORE"])
		if err != nil || store.Scheme != "postgres" || store.Hostname() != svcPostgres || store.Port() != "5432" ||
			store.User.Username() != user || strings.TrimPrefix(store.Path, "/") != db {
			t.Errorf("%s: COSCI_STORE=%q; want postgres://%s@%s:5432/%s (the database the postgres service creates)", name, w.Environment["COSCI_STORE"], user, svcPostgres, db)
		} else if _, ok := store.User.Password(); ok {
			t.Errorf("%s: COSCI_STORE carries a password; it belongs in PGPASSWORD", name)
		}
		for _, key := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "COSCI_KEYS", "COSCI_NOTIFY_URL"} {
			if w.Environment[key] != "${"+key+":-}" {
				t.Errorf("%s: %s=%q; want it passed through from the host (${%s:-})", name, key, w.Environment[key], key)
			}
		}
	}
}

// TestComposeClients: the desk and the workers are the namespace's only clients that run
// for good, and the desk is the only one published: Temporal's frontend is published to no
// one, the Web UI (which can steer any session) to the Docker host only, and the operators'
// starter runs inside the network, by hand.
func TestComposeClients(t *testing.T) {
	compose := readCompose(t)
	ws := workers(compose)
	for name, svc := range compose.Services {
		for _, p := range svc.Ports {
			if strings.HasSuffix(p, ":7233") || p == "7233" {
				t.Errorf("%s publishes Temporal's frontend (%s)", name, p)
			}
		}
		if svc.Environment["TEMPORAL_ADDRESS"] == "" || len(svc.Ports) == 0 {
			continue
		}
		switch {
		case name == svcDesk:
		case name == svcUI:
			for _, p := range svc.Ports {
				if !strings.HasPrefix(p, "127.0.0.1:") {
					t.Errorf("%s, a client of Temporal, publishes %s beyond the Docker host", name, p)
				}
			}
		default:
			t.Errorf("%s, a client of Temporal, publishes %v; only the desk is published", name, svc.Ports)
		}
	}
	for name, svc := range compose.Services {
		long := !slices.Contains(oneShot, name) && !slices.Contains(svc.Profiles, "tools")
		if svc.Environment["TEMPORAL_ADDRESS"] != "" && long && name != svcDesk && name != svcUI && !slices.Contains(ws, name) {
			t.Errorf("%s is a client of Temporal that runs for good; only the desk, the workers and the Web UI are", name)
		}
	}
	if len(compose.Services[svcDesk].Ports) == 0 {
		t.Errorf("%s is not published", svcDesk)
	}

	// The starter: the cosci image's starter, by hand, on the network's Temporal and store.
	st := compose.Services[svcStarter]
	if !slices.Equal(st.Entrypoint, []string{"/usr/local/bin/starter"}) || !slices.Contains(st.Profiles, "tools") {
		t.Errorf("%s: entrypoint %v, profiles %v; want /usr/local/bin/starter in profile tools (not started by up)", svcStarter, st.Entrypoint, st.Profiles)
	}
	sameClient(t, compose, svcStarter)
	if dockerfile := string(mustRead(t, "../Dockerfile")); !regexp.MustCompile(`go build -o /out/starter \./starter`).MatchString(dockerfile) {
		t.Error("the Dockerfile does not build the starter into /out (/usr/local/bin in the image)")
	}
}

// TestComposeDesk: the desk runs the cosci image's desk, signs people in with the lab's
// identity provider at the address browsers use, listens on the port it publishes, and
// reads the workers' Temporal and store; its key comes from the environment, required.
func TestComposeDesk(t *testing.T) {
	compose := readCompose(t)
	d := compose.Services[svcDesk]
	if d.Build == "" || !slices.Equal(d.Entrypoint, []string{"/usr/local/bin/desk"}) {
		t.Errorf("%s: build %q, entrypoint %v; want the repository's image with /usr/local/bin/desk", svcDesk, d.Build, d.Entrypoint)
	}
	if dockerfile := string(mustRead(t, "../Dockerfile")); !regexp.MustCompile(`go build -o /out/desk \./desk`).MatchString(dockerfile) {
		t.Error("the Dockerfile does not build the desk into /out (/usr/local/bin in the image)")
	}
	flags := map[string]string{}
	for _, a := range d.Command {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			t.Fatalf("%s: argument %q; write each flag as --name=value", svcDesk, a)
		}
		flags[name] = value
	}
	if flags["auth"] != "oidc" && flags["auth"] != "proxy" {
		t.Errorf("%s: --auth=%q; want oidc or proxy (local answers loopback only)", svcDesk, flags["auth"])
	}
	if flags["auth"] == "oidc" {
		for _, f := range []string{"oidc-issuer", "oidc-client-id", "public-url"} {
			if !strings.HasPrefix(flags[f], "${") || !strings.Contains(flags[f], ":?") {
				t.Errorf("%s: --%s=%q; want it from the environment, required (${...:?...})", svcDesk, f, flags[f])
			}
		}
	}
	_, port, ok := strings.Cut(flags["listen"], ":")
	if !ok || !strings.HasPrefix(flags["listen"], "0.0.0.0:") {
		t.Errorf("%s: --listen=%q; want 0.0.0.0:PORT, reachable from outside the container", svcDesk, flags["listen"])
	}
	if len(d.Ports) != 1 || !strings.HasSuffix(d.Ports[0], ":"+port) {
		t.Errorf("%s publishes %v; want its --listen port %s", svcDesk, d.Ports, port)
	}
	sameClient(t, compose, svcDesk)
	if v := d.Environment["COSCI_DESK_KEY"]; !strings.HasPrefix(v, "${COSCI_DESK_KEY:?") {
		t.Errorf("%s: COSCI_DESK_KEY=%q; want ${COSCI_DESK_KEY:?...}: the key that seals sign-ins, required and never in the file", svcDesk, v)
	}
}

// sameClient checks that a service reaches Temporal and the session store as the workers
// do, and reads encrypted research with the same keys.
func sameClient(t *testing.T, compose composeFile, name string) {
	t.Helper()
	ws := workers(compose)
	if len(ws) == 0 {
		t.Fatal("no workers")
	}
	w, svc := compose.Services[ws[0]], compose.Services[name]
	for _, key := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "COSCI_STORE", "PGPASSWORD", "COSCI_KEYS"} {
		if svc.Environment[key] != w.Environment[key] {
			t.Errorf("%s: %s=%q; the workers have %q", name, key, svc.Environment[key], w.Environment[key])
		}
	}
}

// TestComposeSecrets: no secret is written in docker-compose.yml; every password comes from
// the environment, which `docker compose` requires to be set.
func TestComposeSecrets(t *testing.T) {
	compose := readCompose(t)
	secret := regexp.MustCompile(`(?i)(PASSWORD|PWD|SECRET|TOKEN|API_KEY)$`)
	passwords := 0
	for name, svc := range compose.Services {
		for key, value := range svc.Environment {
			if !secret.MatchString(key) {
				continue
			}
			if !strings.HasPrefix(value, "${") || !strings.HasSuffix(value, "}") {
				t.Errorf("%s: %s is written in the file; take it from the environment", name, key)
			}
			if strings.Contains(key, "PASSWORD") || strings.HasSuffix(key, "PWD") {
				passwords++
				if !passwordRef.MatchString(value) {
					t.Errorf("%s: %s=%q; want ${POSTGRES_PASSWORD:?...} (or GRAFANA_ADMIN_PASSWORD), so that compose stops when it is not set", name, key, value)
				}
			}
		}
	}
	if passwords == 0 {
		t.Error("no service takes the PostgreSQL password from the environment")
	}
}

// TestComposeImages: every image is pinned to a release; Temporal's are the release the
// tests run (e2e/temporalpg, built by `make server-tools`).
func TestComposeImages(t *testing.T) {
	compose := readCompose(t)
	for name, svc := range compose.Services {
		if svc.Image == "" {
			if svc.Build == "" {
				t.Errorf("%s has neither an image nor a build", name)
			}
			continue
		}
		repo, tag, ok := strings.Cut(strings.SplitN(svc.Image, "@", 2)[0], ":")
		if strings.Contains(tag, "/") { // a registry port, not a tag
			ok = false
		}
		if !ok || tag == "" || tag == "latest" || repo == "" {
			t.Errorf("%s: image %q is not pinned to a release", name, svc.Image)
		}
	}
	for name, prefix := range map[string]string{
		svcPostgres:  "postgres:",
		svcSchema:    "temporalio/admin-tools:" + temporalpg.ServerVersion,
		svcNamespace: "temporalio/admin-tools:" + temporalpg.ServerVersion,
		svcTemporal:  "temporalio/server:" + temporalpg.ServerVersion,
		svcUI:        "temporalio/ui:",
		svcProm:      "prom/prometheus:v3.",
		svcGrafana:   "grafana/grafana:",
	} {
		if img := compose.Services[name].Image; !strings.HasPrefix(img, prefix) {
			t.Errorf("%s runs %q; want %s...", name, img, prefix)
		}
	}
	// Exact tags: a prefix would let 1.32.1 pass for 1.32.10. The admin tools are tagged by
	// the server's release alone from 1.30 on (before: 1.29.1-tctl-1.18.4-cli-1.5.0).
	for _, name := range []string{svcSchema, svcNamespace, svcTemporal} {
		repo, _, _ := strings.Cut(compose.Services[name].Image, ":")
		if img := compose.Services[name].Image; img != repo+":"+temporalpg.ServerVersion {
			t.Errorf("%s runs %q; want %s:%s, the release e2e/temporalpg tests", name, img, repo, temporalpg.ServerVersion)
		}
	}
}

// TestComposeTemporalDynamicConfig: the server's image (1.30 on) ships no dynamic config and
// the server will not start without the file DYNAMIC_CONFIG_FILE_PATH names, so compose
// mounts one from deploy/ there, which must exist and parse.
func TestComposeTemporalDynamicConfig(t *testing.T) {
	svc := readCompose(t).Services[svcTemporal]
	path := svc.Environment["DYNAMIC_CONFIG_FILE_PATH"]
	var source string
	for _, v := range svc.Volumes {
		if src, rest, _ := strings.Cut(v, ":"); strings.TrimSuffix(rest, ":ro") == path {
			source = src
		}
	}
	if path == "" || source == "" {
		t.Fatalf("%s: DYNAMIC_CONFIG_FILE_PATH %q is not a file mounted from the repository (volumes %v)", svcTemporal, path, svc.Volumes)
	}
	var values map[string][]map[string]any
	if err := yaml.Unmarshal(mustRead(t, filepath.Join("..", source)), &values); err != nil {
		t.Fatalf("%s: %v", source, err)
	}
	if len(values["limit.maxIDLength"]) == 0 {
		t.Errorf("%s sets no limit.maxIDLength (the SQL schemas hold ids of 255 characters)", source)
	}
}

// TestComposeStartup: services start in order (depends_on with conditions), long-running
// ones have health checks and restart, one-shot jobs retry on failure, and PostgreSQL keeps
// its data in a volume.
func TestComposeStartup(t *testing.T) {
	compose := readCompose(t)
	want := map[string]map[string]string{
		svcSchema:    {svcPostgres: "service_healthy"},
		svcTemporal:  {svcSchema: "service_completed_successfully"},
		svcNamespace: {svcTemporal: "service_healthy"},
		svcUI:        {svcTemporal: "service_healthy"},
		svcGrafana:   {svcProm: "service_healthy"},
	}
	for _, w := range append(workers(compose), svcDesk) {
		want[w] = map[string]string{
			svcPostgres:  "service_healthy",
			svcTemporal:  "service_healthy",
			svcNamespace: "service_completed_successfully",
		}
	}
	for name, deps := range want {
		got := compose.Services[name].DependsOn
		for dep, cond := range deps {
			if got[dep].Condition != cond {
				t.Errorf("%s depends on %s with condition %q; want %s", name, dep, got[dep].Condition, cond)
			}
		}
	}
	for name, svc := range compose.Services {
		for dep, d := range svc.DependsOn {
			target, ok := compose.Services[dep]
			switch {
			case !ok:
				t.Errorf("%s depends on %s, which is no service", name, dep)
			case d.Condition == "":
				t.Errorf("%s depends on %s without a condition", name, dep)
			case d.Condition == "service_healthy" && (target.Healthcheck == nil || target.Healthcheck.Disable):
				t.Errorf("%s waits for %s to be healthy, which has no health check", name, dep)
			case d.Condition == "service_completed_successfully" && !slices.Contains(oneShot, dep):
				t.Errorf("%s waits for %s to complete, which is no one-shot job", name, dep)
			}
		}
		if slices.Contains(oneShot, name) {
			if !strings.HasPrefix(svc.Restart, "on-failure") {
				t.Errorf("one-shot %s: restart %q; want on-failure[:n]", name, svc.Restart)
			}
			if len(svc.Entrypoint) == 0 || len(svc.Command) == 0 {
				t.Errorf("one-shot %s does not replace the admin-tools image's entrypoint (which sleeps forever)", name)
			}
			continue
		}
		if slices.Contains(svc.Profiles, "tools") { // run by hand (docker compose run --rm)
			if svc.Restart != "" && svc.Restart != "no" {
				t.Errorf("%s, a tool run by hand: restart %q; want none", name, svc.Restart)
			}
			continue
		}
		if svc.Restart != "unless-stopped" {
			t.Errorf("%s: restart %q; want unless-stopped", name, svc.Restart)
		}
	}
	for name, probe := range map[string]string{
		svcPostgres: "pg_isready",
		svcTemporal: "/api/v1/cluster-info", // the image has no temporal CLI (1.30 on)
		svcUI:       "/healthz",
		svcProm:     "/-/ready",
		svcGrafana:  "/api/health",
	} {
		hc := compose.Services[name].Healthcheck
		if hc == nil || hc.Disable || !strings.Contains(strings.Join(hc.Test, " "), probe) {
			t.Errorf("%s: health check %+v; want one with %s", name, hc, probe)
		}
	}
	pg := compose.Services[svcPostgres]
	var dataVolume string
	for _, v := range pg.Volumes {
		if src, dst, _ := strings.Cut(v, ":"); dst == "/var/lib/postgresql/data" {
			dataVolume = src
		}
	}
	if _, ok := compose.Volumes[dataVolume]; dataVolume == "" || !ok {
		t.Errorf("%s keeps its data (volumes %v) outside a named volume declared in the file", svcPostgres, pg.Volumes)
	}
}

// TestComposeWorkerImage: the workers are built by the repository's Dockerfile, which builds
// this worker with go.mod's Go, and the children it runs beside it.
func TestComposeWorkerImage(t *testing.T) {
	compose := readCompose(t)
	for _, name := range workers(compose) {
		build := compose.Services[name].Build
		dockerfile := mustRead(t, "../"+strings.TrimSuffix(build, "/")+"/Dockerfile")
		if !regexp.MustCompile(`go build -o \S+ \./worker`).Match(dockerfile) {
			t.Errorf("%s: the Dockerfile in %q does not build ./worker", name, build)
		}
		// What the worker runs as children: the analysis sandbox (beside the worker, built
		// with cgo for DuckDB), prlimit and pdftotext, so the image cannot be a static one.
		for _, want := range []string{`CGO_ENABLED=1 go build -o /out/cosci-sandbox \./sandbox`, `poppler-utils`, `FROM debian:`} {
			if !regexp.MustCompile(want).Match(dockerfile) {
				t.Errorf("%s: the Dockerfile in %q lacks %s", name, build, want)
			}
		}
		goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mustRead(t, "../go.mod"))
		if goVersion == nil || !strings.Contains(string(dockerfile), "golang:"+string(goVersion[1])) {
			t.Errorf("%s: the Dockerfile's Go image does not match go.mod's Go version", name)
		}
	}
}

// TestMakefileRegistersSearchAttributes: `make server`, the demo and the scripts that
// record histories register the same search attributes as docker-compose.yml.
func TestMakefileRegistersSearchAttributes(t *testing.T) {
	for _, file := range []string{"../Makefile", "../scripts/demo.sh", "../scripts/lib.sh"} {
		text := string(mustRead(t, file))
		for name, typ := range workflows.SearchAttributes {
			if !strings.Contains(text, "--search-attribute "+name+"="+typ) {
				t.Errorf("%s does not register %s=%s", file, name, typ)
			}
		}
	}
}

// wantEnv checks that a service sets each of keys.
func wantEnv(t *testing.T, name string, svc composeService, keys ...string) {
	t.Helper()
	var missing []string
	for _, k := range keys {
		if _, ok := svc.Environment[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s does not set %s", name, strings.Join(missing, ", "))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestComposeObservability: every worker serves its metrics, the server its own, Prometheus
// scrapes exactly those (deploy/prometheus.yml), and Grafana is provisioned with Prometheus
// under the uid the cosci dashboard reads and with the dashboard itself.
func TestComposeObservability(t *testing.T) {
	compose := readCompose(t)
	var scrape struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(mustRead(t, "../deploy/prometheus.yml"), &scrape); err != nil {
		t.Fatalf("deploy/prometheus.yml: %v", err)
	}
	var targets []string
	for _, c := range scrape.ScrapeConfigs {
		for _, s := range c.StaticConfigs {
			targets = append(targets, s.Targets...)
		}
	}
	want := []string{svcTemporal + ":8000"}
	if got := compose.Services[svcTemporal].Environment["PROMETHEUS_ENDPOINT"]; got != "0.0.0.0:8000" {
		t.Errorf("%s: PROMETHEUS_ENDPOINT=%q; want 0.0.0.0:8000", svcTemporal, got)
	}
	for _, name := range workers(compose) {
		addr := compose.Services[name].Environment["COSCI_METRICS_ADDRESS"]
		if _, port, ok := strings.Cut(addr, ":"); !ok || port == "" {
			t.Errorf("%s: COSCI_METRICS_ADDRESS=%q; want :port", name, addr)
		} else {
			want = append(want, name+":"+port)
		}
		// The worker's environment as compose gives it with the host's variables unset.
		getenv := func(k string) string {
			if v := compose.Services[name].Environment[k]; !strings.HasPrefix(v, "${") {
				return v
			}
			return ""
		}
		if c, err := parseFlags(nil, getenv); err != nil || c.metrics != addr {
			t.Errorf("%s: the worker reads metrics address %q (%v) from its environment; want %q", name, c.metrics, err, addr)
		}
	}
	slices.Sort(want)
	slices.Sort(targets)
	if !slices.Equal(targets, want) {
		t.Errorf("deploy/prometheus.yml scrapes %v; want %v", targets, want)
	}
	prom := compose.Services[svcProm]
	if !slices.Contains(prom.Volumes, "./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro") {
		t.Errorf("%s mounts %v; want deploy/prometheus.yml as its config", svcProm, prom.Volumes)
	}

	var sources struct {
		Datasources []struct{ Name, UID, Type, URL string }
	}
	if err := yaml.Unmarshal(mustRead(t, "../deploy/grafana/provisioning/datasources/prometheus.yml"), &sources); err != nil {
		t.Fatal(err)
	}
	if len(sources.Datasources) != 1 || sources.Datasources[0].UID != "prometheus" || sources.Datasources[0].URL != "http://"+svcProm+":9090" {
		t.Errorf("Grafana's data sources %+v; want Prometheus at http://%s:9090 with uid prometheus", sources.Datasources, svcProm)
	}
	dashboard := string(mustRead(t, "../deploy/grafana/dashboards/cosci.json"))
	if strings.Count(dashboard, `"uid": "prometheus"`) < 10 || strings.Contains(dashboard, "${DS_") {
		t.Error("the dashboard does not read the provisioned data source (uid prometheus) in every panel")
	}
	var provider struct {
		Providers []struct {
			Options struct{ Path string }
		}
	}
	if err := yaml.Unmarshal(mustRead(t, "../deploy/grafana/provisioning/dashboards/cosci.yml"), &provider); err != nil {
		t.Fatal(err)
	}
	g := compose.Services[svcGrafana]
	if len(provider.Providers) != 1 || !slices.Contains(g.Volumes, "./deploy/grafana/dashboards:"+provider.Providers[0].Options.Path+":ro") ||
		!slices.Contains(g.Volumes, "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro") {
		t.Errorf("%s mounts %v; want deploy/grafana/provisioning and the dashboards where the provider reads them (%+v)", svcGrafana, g.Volumes, provider)
	}
}

// TestComposePublishesTheDeskAlone: every port compose publishes but the desk's is bound to
// the Docker host's loopback: Prometheus has no sign-in, Grafana not the lab's, and the Web
// UI steers any session. Grafana's admin password comes from a secret file, never the
// environment (which docker inspect shows).
func TestComposePublishesTheDeskAlone(t *testing.T) {
	compose := readCompose(t)
	published := 0
	for name, svc := range compose.Services {
		for _, p := range svc.Ports {
			if name == svcDesk {
				continue
			}
			published++
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s publishes %q on every interface; want 127.0.0.1:HOST:CONTAINER", name, p)
			}
		}
	}
	if published < 3 {
		t.Errorf("%d ports besides the desk's; want the Web UI's, Prometheus' and Grafana's", published)
	}
	g := compose.Services[svcGrafana]
	if g.Environment["GF_SECURITY_ADMIN_PASSWORD__FILE"] != "/run/secrets/grafana_admin_password" || !slices.Contains(g.Secrets, "grafana_admin_password") {
		t.Errorf("%s: environment %v, secrets %v; want the admin password from the grafana_admin_password secret's file", svcGrafana, g.Environment, g.Secrets)
	}
	if _, ok := g.Environment["GF_SECURITY_ADMIN_PASSWORD"]; ok {
		t.Errorf("%s takes its admin password from the environment", svcGrafana)
	}
	if f := compose.Secrets["grafana_admin_password"].File; !strings.HasPrefix(f, "${GRAFANA_ADMIN_PASSWORD_FILE:?") {
		t.Errorf("the secret's file is %q; want ${GRAFANA_ADMIN_PASSWORD_FILE:?...}, which compose refuses to run without", f)
	}
}
