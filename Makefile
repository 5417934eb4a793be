# cosci: durable AI co-scientist research sessions on Temporal.
# `make demo` runs a research session end to end; `make test` runs the whole suite.

TEMPORAL_VERSION := v1.5.1
TEMPORAL         := bin/temporal
# The Temporal server, built on its own with its SQL tool and schemas, for the tests that run
# Temporal on PostgreSQL (e2e/temporalpg) as production does (docker-compose.yml's images are
# the same release). Newer than the 1.29.1 inside CLI v1.5.1: CLIs from v1.6 on do not install
# from the module proxy, and servers from v1.32.2 on need a newer Go than this machine's.
TEMPORAL_SERVER_VERSION := v1.32.1
TEMPORAL_SERVER         := bin/temporal-server
TEMPORAL_SQL_TOOL       := bin/temporal-sql-tool
TEMPORAL_SCHEMA         := bin/temporal-schema
SEARCH_ATTRS     := --search-attribute SessionStatus=Keyword --search-attribute ScientistId=Keyword \
                    --search-attribute HypothesisCount=Int --search-attribute TopElo=Double \
                    --search-attribute TotalTokens=Int --search-attribute CostUSD=Double --search-attribute SessionType=Keyword \
                    --search-attribute ConversationId=Keyword --search-attribute ParentSession=Keyword \
                    --search-attribute SourceCheckpoint=Int
WORKFLOWCHECK    := go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0

# A reference MCP server nobody here wrote, from npm: the end-to-end tests run it beside
# cosci's own literature server.
EVERYTHING_VERSION := 2026.8.31
EVERYTHING         := bin/npm/node_modules/.bin/mcp-server-everything

# axe-core, the accessibility checker the desk's browser test injects into each page.
AXE_VERSION := 4.14.1
AXE         := bin/npm/node_modules/axe-core/axe.min.js

# Debian's chromium, which the desk's browser test drives (e2e/desk_test.go, chromedp).
CHROMIUM         := /usr/bin/chromium
# Debian's poppler-utils: pdftotext, which the literature server reads PDFs with
# (internal/fulltext), run as a bounded child process.
PDFTOTEXT        := /usr/bin/pdftotext

.PHONY: tools server-tools npm-tools server worker build demo demo-lab test check fuzz clean desk-screenshots typeset-corpus lab-tables stats-truth

# The official Temporal CLI (dev server + Web UI), built from the Go module proxy once.
tools: $(TEMPORAL)
$(TEMPORAL):
	@echo "Building the Temporal CLI $(TEMPORAL_VERSION) into bin/ (about 6 minutes the first time)..."
	GOBIN=$(CURDIR)/bin go install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_VERSION)

# The Temporal server and its SQL tool, built from the Go module proxy once (about 5 minutes
# the first time), and the module's PostgreSQL schemas and sample config copied out of the
# module cache, so that tests need no network (without the module's Go files: bin/ is inside
# this module, and `go test ./...` would take them for a package of cosci). `go install`
# names the binaries after their directories (server, sql): they are built into a scratch
# directory and renamed.
server-tools: $(TEMPORAL_SERVER) $(TEMPORAL_SQL_TOOL) $(TEMPORAL_SCHEMA)
$(TEMPORAL_SERVER):
	@echo "Building the Temporal server $(TEMPORAL_SERVER_VERSION) into bin/ (about 5 minutes the first time)..."
	@rm -rf bin/.gobin-server && mkdir -p bin/.gobin-server
	GOBIN=$(CURDIR)/bin/.gobin-server go install go.temporal.io/server/cmd/server@$(TEMPORAL_SERVER_VERSION)
	mv bin/.gobin-server/server $@ && rmdir bin/.gobin-server
$(TEMPORAL_SQL_TOOL):
	@echo "Building the Temporal SQL tool $(TEMPORAL_SERVER_VERSION) into bin/..."
	@rm -rf bin/.gobin-sql && mkdir -p bin/.gobin-sql
	GOBIN=$(CURDIR)/bin/.gobin-sql go install go.temporal.io/server/cmd/tools/sql@$(TEMPORAL_SERVER_VERSION)
	mv bin/.gobin-sql/sql $@ && rmdir bin/.gobin-sql
$(TEMPORAL_SCHEMA):
	@dir=$$(go mod download -json go.temporal.io/server@$(TEMPORAL_SERVER_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	if [ -z "$$dir" ]; then echo "cannot download go.temporal.io/server@$(TEMPORAL_SERVER_VERSION)"; exit 1; fi; \
	rm -rf $@.tmp && mkdir -p $@.tmp && \
	cp -R "$$dir/schema/postgresql" $@.tmp/ && \
	cp "$$dir/config/development-postgres12.yaml" $@.tmp/ && \
	chmod -R u+w $@.tmp && find $@.tmp -name '*.go' -delete && mv $@.tmp $@ && \
	echo "Copied the PostgreSQL schemas of go.temporal.io/server@$(TEMPORAL_SERVER_VERSION) into $@"

# A persistent dev server: state in .data/temporal.db, Web UI on http://localhost:8233.
server: $(TEMPORAL)
	@mkdir -p .data
	$(TEMPORAL) server start-dev --db-filename .data/temporal.db --ui-port 8233 $(SEARCH_ATTRS)

npm-tools: $(EVERYTHING) $(AXE)
$(AXE):
	@echo "Installing axe-core@$(AXE_VERSION) into bin/npm (the desk's accessibility checks)..."
	npm install --no-audit --no-fund --loglevel=error --prefix bin/npm axe-core@$(AXE_VERSION)

$(EVERYTHING):
	@echo "Installing @modelcontextprotocol/server-everything@$(EVERYTHING_VERSION) into bin/npm (for the end-to-end tests)..."
	npm install --no-audit --no-fund --loglevel=error --prefix bin/npm @modelcontextprotocol/server-everything@$(EVERYTHING_VERSION)

$(CHROMIUM):
	@echo "Installing Debian's chromium for the desk's browser test..."
	@if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	else sudo apt-get update -qq && sudo apt-get install -y -qq chromium; fi

$(PDFTOTEXT):
	@echo "Installing Debian's poppler-utils (pdftotext) for the literature server's full texts..."
	@if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq poppler-utils; \
	else sudo apt-get update -qq && sudo apt-get install -y -qq poppler-utils; fi

build:
	go build -o bin/cosci-worker ./worker
	go build -o bin/starter ./starter
	go build -o bin/literature ./literature
	go build -o bin/desk ./desk
	@# The simulated lab of make demo-lab: a planned experiment's result table, from the hypothesis's hidden quality.
	go build -o bin/simlab ./scripts/simlab
	@# The analysis sandbox's child, the one binary linking DuckDB (cgo; the first link takes about 2 minutes).
	go build -o bin/cosci-sandbox ./sandbox

# A worker in the foreground (the offline provider, store in .data/sessions).
worker: $(PDFTOTEXT) build
	bin/cosci-worker

# One research session end to end: server (if none answers), worker, starter.
demo: $(TEMPORAL) $(PDFTOTEXT) build
	@scripts/demo.sh

# The lab end to end: a session with the lab's table, one experiment on a top hypothesis
# planned and confirmed, its result returned by the simulated lab, analysed in the sandbox,
# and the report's "Tested in the lab" citing the analysis; the session left at the desk.
demo-lab: $(TEMPORAL) build
	@scripts/demo-lab.sh

# The whole suite: static checks, unit and workflow tests, end-to-end tests on a real
# dev server started from bin/temporal, and on a Temporal server on PostgreSQL.
test: $(TEMPORAL) $(TEMPORAL_SERVER) $(TEMPORAL_SQL_TOOL) $(TEMPORAL_SCHEMA) $(EVERYTHING) $(AXE) $(CHROMIUM) $(PDFTOTEXT) check
	go test -count=1 -timeout 30m ./...
	@# The rolling-upgrade test's build B (a changed workflow) replays every recorded history too.
	go test -count=1 -tags cosci_build_b -run Replay ./workflows

# The pictures of docs/desk.md and the README, taken by the desk's browser test.
desk-screenshots: $(TEMPORAL) $(AXE) $(CHROMIUM)
	COSCI_DESK_SCREENSHOTS=$(CURDIR)/docs/images go test -count=1 -run TestDeskInABrowser ./e2e

# The corpus of typeset papers the full-text reader is tested on (internal/fulltext/testdata/
# typeset): each paper typeset again by pdflatex and its truth (every probe sentence's page,
# column and section, as TeX placed it) written beside it. Needs Debian's texlive packages
# (texlive-latex-extra, texlive-publishers); `make test` does not: it reads the committed PDFs.
typeset-corpus:
	scripts/typeset.sh

# The truth internal/stats is tested against: R's own tests (t.test, wilcox.test, fisher.test,
# chisq.test, cor.test, lm, p.adjust) on R's built-in datasets, inputs and answers written to
# internal/stats/testdata/r-truth.json. Needs Debian's r-base-core; `make test` does not: it
# reads the committed file.
stats-truth:
	Rscript scripts/statstruth.R internal/stats/testdata/r-truth.json

# The lab tables internal/dataset is tested on (internal/dataset/testdata/lab): written by
# R, pandas and Gnumeric as labs export them, each with its maker's dump of the values
# beside it. Needs Debian's r-base-core, python3-pandas, gnumeric and locales; `make test`
# does not: it reads the committed files.
lab-tables:
	scripts/labtables.sh

# Fuzzing: each fuzz target in turn for FUZZTIME (make fuzz FUZZTIME=10m). `make test` runs
# their seed corpora; this searches beyond them. Crashers land in the package's
# testdata/fuzz/ and are then seeds of their own.
FUZZTIME ?= 1m
FUZZ_TARGETS := \
	./internal/prompt:FuzzParseHypothesis ./internal/prompt:FuzzParseReview \
	./internal/prompt:FuzzParseComparison ./internal/prompt:FuzzParsePlan \
	./internal/prompt:FuzzParseDebate ./internal/prompt:FuzzParseMetaReview \
	./internal/prompt:FuzzParseOverview ./internal/prompt:FuzzParseAnalysis \
	./internal/research:FuzzRequest \
	./internal/session:FuzzParseCommand ./workflows:FuzzCarried \
	./internal/store:FuzzCheckpointRecord ./internal/store:FuzzEventLog \
	./internal/store:FuzzRecord ./internal/store:FuzzTurn ./internal/store:FuzzPrompt \
	./internal/tournament:FuzzResult ./internal/dataset:FuzzRead \
	./internal/library:FuzzBibTeX ./internal/library:FuzzRIS \
	./internal/library:FuzzCSLJSON ./internal/library:FuzzDecodeLaTeX ./internal/library:FuzzBibTeXExpansion \
	./internal/stats:FuzzRun
# Minimising each new input is capped at 2,000 runs: the library's test binary links bleve,
# whose coverage counters make each run slow, and the default (60 s per input) spent whole
# fuzzing budgets minimising instead of fuzzing.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in $${t%%:*} for $(FUZZTIME)"; \
		go test $${t%%:*} -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2000x; \
	done

# Static checks: vet, and workflowcheck for non-determinism in workflow code.
check:
	go vet ./...
	go run $(WORKFLOWCHECK) ./workflows/...

clean:
	rm -rf .data bin/cosci-worker bin/starter bin/literature bin/desk bin/cosci-sandbox bin/simlab
