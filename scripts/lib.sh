# Sourced by scripts/record-*.sh, from the module root: a dev server and a worker of the
# recording's own, the answers a grounded session waits for, and the recorded histories
# written into workflows/testdata.

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
