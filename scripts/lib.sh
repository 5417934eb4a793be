# Sourced by scripts/record-*.sh and scripts/demo-lab.sh, from the module root: a dev server
# and a worker of the recording's own, the answers a grounded session waits for, and the
# recorded histories written into workflows/testdata; for a demo, the server that answers (or
# one started), a worker and the desk (demo_up, below).

# start_dev_server PORT UI_PORT: a headless dev server on 127.0.0.1:PORT with cosci's search
# attributes, its log in $R/server.log; it returns once the server answers. Sets A (its
# address), R (a scratch directory), SERVER (its pid) and WORKER (empty until start_worker),
# and stops both on exit (stop_all).
start_dev_server() {
  A=127.0.0.1:$1
  R=$(mktemp -d)
  bin/temporal server start-dev --ip 127.0.0.1 --port "$1" --ui-port "$2" --headless --log-level error \
    --search-attribute SessionStatus=Keyword --search-attribute ScientistId=Keyword \
    --search-attribute HypothesisCount=Int --search-attribute TopElo=Double \
    --search-attribute TotalTokens=Int --search-attribute CostUSD=Double --search-attribute SessionType=Keyword \
    --search-attribute ConversationId=Keyword --search-attribute ParentSession=Keyword \
    --search-attribute SourceCheckpoint=Int > "$R/server.log" 2>&1 &
  SERVER=$!
  WORKER=
  trap stop_all EXIT
  for _ in $(seq 1 120); do bin/temporal operator cluster health --address "$A" >/dev/null 2>&1 && break; sleep 0.5; done
}

# stop_all stops the worker and the dev server.
stop_all() { kill $WORKER $SERVER 2>/dev/null || true; }

# write_literature_tools [TRUST]: $R/tools.yaml, the in-box literature server ($R/lit) over
# testdata/library, marked trust: TRUST when one is given.
write_literature_tools() {
  cat > "$R/tools.yaml" <<YAML
servers:
  - name: literature
    command: [$R/lit, --library, $PWD/testdata/library, --index, $R/index]
    rate: 20
YAML
  if [ -n "${1:-}" ]; then echo "    trust: $1" >> "$R/tools.yaml"; fi
}

# start_worker FLAGS...: the worker built as $R/cw, with FLAGS, its store in $R/sessions and
# its log in $R/worker.log; the starter's commands then use the same server and store.
start_worker() {
  (cd "$R" && TEMPORAL_ADDRESS=$A COSCI_STORE=$R/sessions exec ./cw "$@" > worker.log 2>&1) &
  WORKER=$!
  export TEMPORAL_ADDRESS=$A COSCI_STORE=$R/sessions
}

# waiting ID: the ids of the calls of session ID that wait for an answer now.
waiting() {
  $R/st status "$1" --json | python3 -c 'import json,sys; print(" ".join(w["id"] for w in json.load(sys.stdin).get("waiting") or [] if not w.get("decision")))'
}

# answer_until_ended ID [--show-first]: answers the calls session ID waits for until it
# ends: the first approved, the second rejected, the third answered with the scientist's own
# result, the rest approved as they come. --show-first prints the first call as the
# scientist reads it before approving it. Counts the calls answered in $answered.
answer_until_ended() {
  local id=$1 show=${2:-} state call
  answered=0
  while :; do
    state=$($R/st status "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    case $state in completed|failed) break;; esac
    for call in $(waiting "$id"); do
      case $answered in
        0) if [ "$show" = --show-first ]; then
             $R/st status "$id" | grep -A4 "waiting for you" || true # the whole call, as the scientist reads it
           fi
           $R/st answer-tool "$id" --call "$call" --approve;;
        1) $R/st answer-tool "$id" --call "$call" --reject --reason "paywalled: not in the lab's subscription";;
        2) $R/st answer-tool "$id" --call "$call" --result "Lee et al. (2024) found that microglial depletion halved tau spread between connected regions in P301S mice.";;
        *) $R/st answer-tool "$id" --call "$call" --approve >/dev/null;;
      esac || true # the session may have moved on: a refused answer is not a failure here
      answered=$((answered + 1))
    done
    sleep 0.3
  done
}

# record_runs ID NAME: the history of each run of session ID, as workflows/testdata/NAME.json
# (the run that continued as new, or the only one) and NAME-closing.json (the run after it).
record_runs() {
  local id=$1 name=$2 runs r rid st f
  runs=$(bin/temporal workflow list --address "$A" --query "WorkflowId='$id'" -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(r["execution"]["runId"]+":"+r["status"] for r in d))')
  for r in $runs; do
    rid=${r%%:*}; st=${r##*:}
    case $st in *CONTINUED*) f=workflows/testdata/$name.json;; *) f=workflows/testdata/$name-closing.json;; esac
    [ "$(echo $runs | wc -w)" = 1 ] && f=workflows/testdata/$name.json
    bin/temporal workflow show --address "$A" --workflow-id "$id" --run-id "$rid" -o json > "$f"
    echo "$st -> $f ($(wc -c < "$f") bytes)"
  done
}

# The demos' processes. demo_up starts what a demo runs on, as scripts/demo.sh does: the
# Temporal server at $TEMPORAL_ADDRESS (default 127.0.0.1:7233) if one answers, else a dev
# server started here with its database in $D/temporal.db and the Web UI on 8233; then a
# worker (offline provider, $COSCI_DEMO_LATENCY per turn, default 300ms) and the desk (local
# mode on $COSCI_DEMO_DESK, default 127.0.0.1:8090, signed in by a link whose token is new
# each time). B names the binaries' directory (default bin), D the demo's data directory
# (default .data); logs go to $D/*.log, for this user alone. Everything started is stopped on
# exit (demo_down). Sets DESK_ADDR and DESK_TOKEN, the desk's address and its sign-in token.
demo_up() {
  B=${B:-bin} D=${D:-.data}
  DEMO_PIDS=()
  trap demo_down EXIT
  trap 'echo; echo "demo interrupted: stopping what it started"; exit 130' INT TERM
  mkdir -p "$D"
  chmod 600 "$D"/*.log 2>/dev/null || true
  export TEMPORAL_ADDRESS=${TEMPORAL_ADDRESS:-127.0.0.1:7233}
  if demo_healthy; then
    echo "Using the Temporal server already on $TEMPORAL_ADDRESS."
  else
    echo "Starting a Temporal dev server on $TEMPORAL_ADDRESS (Web UI http://localhost:8233, log $D/server.log)..."
    "$B/temporal" server start-dev --ip "${TEMPORAL_ADDRESS%:*}" --port "${TEMPORAL_ADDRESS##*:}" \
      --db-filename "$D/temporal.db" --ui-port 8233 \
      --search-attribute SessionStatus=Keyword --search-attribute ScientistId=Keyword \
      --search-attribute HypothesisCount=Int --search-attribute TopElo=Double \
      --search-attribute TotalTokens=Int --search-attribute CostUSD=Double --search-attribute SessionType=Keyword \
      --search-attribute ConversationId=Keyword --search-attribute ParentSession=Keyword \
      --search-attribute SourceCheckpoint=Int \
      >"$D/server.log" 2>&1 &
    DEMO_PIDS+=($!)
    for _ in $(seq 1 120); do demo_healthy && break; sleep 0.5; done
    demo_healthy || { echo "the dev server did not come up; see $D/server.log"; exit 1; }
    echo "(this server stops when the demo ends; run \`make server\` in another terminal to keep it)"
  fi
  echo "Starting a worker (offline provider, ${COSCI_DEMO_LATENCY:-300ms} simulated latency per turn; log $D/worker.log)..."
  "$B/cosci-worker" --offline-latency "${COSCI_DEMO_LATENCY:-300ms}" >"$D/worker.log" 2>&1 &
  DEMO_PIDS+=($!)
  local addr=${COSCI_DEMO_DESK:-127.0.0.1:8090} token
  token="$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
  echo "Starting the desk on http://$addr (local mode; log $D/desk.log)..."
  COSCI_DESK_TOKEN="$token" "$B/desk" --listen "$addr" --library testdata/library >"$D/desk.log" 2>&1 &
  DEMO_PIDS+=($!)
  DESK_ADDR=$addr DESK_TOKEN=$token
}

demo_healthy() { "$B/temporal" operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; }

# demo_down stops what demo_up started, by the ids it kept.
demo_down() {
  for pid in "${DEMO_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
