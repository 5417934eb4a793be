#!/usr/bin/env bash
# The demo: one real research session on the embedded default (dev server + offline
# provider), followed live, ending with the ranked hypotheses and the report.
# Stops whatever it started on exit, Ctrl-C included.
set -euo pipefail
# Its logs hold the desk's sign-in link, token included, and the sessions' research: for
# this user alone (0600), and so are the logs of an earlier demo.
umask 077
cd "$(dirname "$0")/.."
mkdir -p .data
chmod 600 .data/*.log 2>/dev/null || true

started=()
cleanup() {
  for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo; echo "demo interrupted: stopping what it started"; exit 130' INT TERM

healthy() { bin/temporal operator cluster health --address 127.0.0.1:7233 >/dev/null 2>&1; }

if healthy; then
  echo "Using the Temporal server already on 127.0.0.1:7233."
else
  echo "Starting a Temporal dev server (Web UI http://localhost:8233, log .data/server.log)..."
  bin/temporal server start-dev --db-filename .data/temporal.db --ui-port 8233 \
    --search-attribute SessionStatus=Keyword --search-attribute ScientistId=Keyword \
    --search-attribute HypothesisCount=Int --search-attribute TopElo=Double \
    --search-attribute TotalTokens=Int --search-attribute CostUSD=Double --search-attribute SessionType=Keyword \
    --search-attribute ConversationId=Keyword --search-attribute ParentSession=Keyword \
    --search-attribute SourceCheckpoint=Int \
    >.data/server.log 2>&1 &
  started+=($!)
  for _ in $(seq 1 120); do healthy && break; sleep 0.5; done
  healthy || { echo "the dev server did not come up; see .data/server.log"; exit 1; }
  echo "(this server stops when the demo ends; run \`make server\` in another terminal to keep it)"
fi

# The agents search the literature through cosci's literature server, over the small
# library the tests ship (testdata/library: invented references, and the full texts of
# three of them, PDFs and a PMC-style JATS file), started by the worker.
cat >.data/tools.yaml <<'YAML'
servers:
  - name: literature
    command: [bin/literature, --library, testdata/library, --index, .data/literature-index]
    rate: 20
YAML
echo "Starting a worker (offline provider, ${COSCI_DEMO_LATENCY:-300ms} simulated latency per turn, tools in .data/tools.yaml; log .data/worker.log)..."
bin/cosci-worker --offline-latency "${COSCI_DEMO_LATENCY:-300ms}" --tools .data/tools.yaml >.data/worker.log 2>&1 &
started+=($!)

# The desk, the scientist's way in: local mode, this machine only, signed in as $USER by
# the link below, whose token is new for each demo (a page of another site has none).
desk_addr="${COSCI_DEMO_DESK:-127.0.0.1:8090}"
desk_token="$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
echo "Starting the desk on http://$desk_addr (local mode; log .data/desk.log)..."
COSCI_DESK_TOKEN="$desk_token" bin/desk --listen "$desk_addr" --library testdata/library >.data/desk.log 2>&1 &
started+=($!)

default_goal="Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease"
id="demo-$(date +%s)"
echo "Follow it at the desk too (this link signs you in): http://$desk_addr/s/$id?token=$desk_token"
bin/starter start --watch --id "$id" \
  --goal "${COSCI_DEMO_GOAL:-$default_goal}" \
  --max-hypotheses "${COSCI_DEMO_HYPOTHESES:-20}" \
  --review-types initial,full \
  --tools literature.search,literature.fetch

# Citations at the page: quotes from the full texts, with where they are in the paper.
bin/starter report "$id" --out ".data/report-$id" >/dev/null
at_page=$(grep -E '^  > .* — \[p\. [0-9]+' ".data/report-$id/report.md" | sort -u | head -n 3 || true)
echo
if [ -n "$at_page" ]; then
  echo "Quotes cited at the page of the full text (report: .data/report-$id/report.md; at the desk, the page links the PDF):"
  echo "$at_page"
else
  echo "No quote of this session came from a full text's passage (report: .data/report-$id/report.md)."
fi
echo
echo "The session graph: the subagents the meta-review asked for (continue or fork it with \`go run ./starter continue|fork $id\`):"
bin/starter tree "$id"

# The session has ended; the desk still shows it, and it still answers questions, from its
# final state. In a terminal, keep the desk up until the scientist is done.
if [ -t 0 ]; then
  echo
  echo "The desk stays up: http://$desk_addr/s/$id?token=$desk_token (ask the session about its results there)."
  read -r -p "Press Enter to stop the demo. " _ || true
fi
