package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cosci-dev/cosci/workflows"
)

// TestComposeFile checks docker-compose.yml against the code, since no Docker engine runs
// where the tests do: the server registers every search attribute the workflow sets, the
// worker reaches it by service name, and the Dockerfile builds this worker.
func TestComposeFile(t *testing.T) {
	raw, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Build       string            `yaml:"build"`
			Command     []string          `yaml:"command"`
			Ports       []string          `yaml:"ports"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   map[string]any    `yaml:"depends_on"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml is not valid YAML: %v", err)
	}
	server, ok := compose.Services["temporal"]
	if !ok {
		t.Fatal("no temporal service")
	}
	if !strings.HasPrefix(server.Image, "temporalio/temporal:") || !slices.Contains(server.Command, "start-dev") {
		t.Errorf("temporal service runs %s %v; want the official CLI's dev server", server.Image, server.Command)
	}
	for name, typ := range workflows.SearchAttributes {
		if !slices.Contains(server.Command, "--search-attribute="+name+"="+typ) {
			t.Errorf("the server does not register search attribute %s=%s", name, typ)
		}
	}
	for _, port := range []string{"7233:7233", "8233:8233"} {
		if !slices.Contains(server.Ports, port) {
			t.Errorf("the server does not publish %s", port)
		}
	}
	worker, ok := compose.Services["worker"]
	if !ok {
		t.Fatal("no worker service")
	}
	if worker.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" || worker.Environment["COSCI_STORE"] == "" {
		t.Errorf("worker environment %v", worker.Environment)
	}
	if _, ok := worker.DependsOn["temporal"]; !ok {
		t.Error("the worker does not wait for the server")
	}
	dockerfile, err := os.ReadFile("../" + strings.TrimSuffix(worker.Build, "/") + "/Dockerfile")
	if err != nil {
		t.Fatalf("worker build: %v", err)
	}
	if !regexp.MustCompile(`go build -o \S+ \./worker`).Match(dockerfile) {
		t.Error("the Dockerfile does not build ./worker")
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mustRead(t, "../go.mod"))
	if goVersion == nil || !strings.Contains(string(dockerfile), "golang:"+string(goVersion[1])) {
		t.Error("the Dockerfile's Go image does not match go.mod's Go version")
	}
}

// TestMakefileRegistersSearchAttributes: `make server` and the demo register the same
// search attributes as docker-compose.yml.
func TestMakefileRegistersSearchAttributes(t *testing.T) {
	for _, file := range []string{"../Makefile", "../scripts/demo.sh"} {
		text := string(mustRead(t, file))
		for name, typ := range workflows.SearchAttributes {
			if !strings.Contains(text, "--search-attribute "+name+"="+typ) {
				t.Errorf("%s does not register %s=%s", file, name, typ)
			}
		}
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
