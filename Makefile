# cosci: durable AI co-scientist research sessions on Temporal.
# `make demo` runs a research session end to end; `make test` runs the whole suite.

TEMPORAL_VERSION := v1.5.1
TEMPORAL         := bin/temporal
SEARCH_ATTRS     := --search-attribute SessionStatus=Keyword --search-attribute ScientistId=Keyword \
                    --search-attribute HypothesisCount=Int --search-attribute TopElo=Double \
                    --search-attribute TotalTokens=Int --search-attribute SessionType=Keyword \
                    --search-attribute ConversationId=Keyword --search-attribute ParentSession=Keyword \
                    --search-attribute SourceCheckpoint=Int
WORKFLOWCHECK    := go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0

.PHONY: tools server worker build demo test check clean

# The official Temporal CLI (dev server + Web UI), built from the Go module proxy once.
tools: $(TEMPORAL)
$(TEMPORAL):
	@echo "Building the Temporal CLI $(TEMPORAL_VERSION) into bin/ (about 6 minutes the first time)..."
	GOBIN=$(CURDIR)/bin go install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_VERSION)

# A persistent dev server: state in .data/temporal.db, Web UI on http://localhost:8233.
server: $(TEMPORAL)
	@mkdir -p .data
	$(TEMPORAL) server start-dev --db-filename .data/temporal.db --ui-port 8233 $(SEARCH_ATTRS)

build:
	go build -o bin/cosci-worker ./worker
	go build -o bin/starter ./starter

# A worker in the foreground (the offline provider, store in .data/sessions).
worker: build
	bin/cosci-worker

# One research session end to end: server (if none answers), worker, starter.
demo: $(TEMPORAL) build
	@scripts/demo.sh

# The whole suite: static checks, unit and workflow tests, end-to-end tests on a real
# dev server started from bin/temporal.
test: $(TEMPORAL) check
	go test -count=1 -timeout 30m ./...

# Static checks: vet, and workflowcheck for non-determinism in workflow code.
check:
	go vet ./...
	go run $(WORKFLOWCHECK) ./workflows/...

clean:
	rm -rf .data bin/cosci-worker bin/starter
