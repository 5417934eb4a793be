#!/usr/bin/env bash
# Records workflows/testdata/session-tooltrust.json: a grounded session whose tool server the
# tools file marks trust: external, on a dev server and a worker of its own (port 7311): every
# call waits for the scientist (the tool-trust version), who sees its whole arguments. The
# worker serves the in-box literature server over testdata/library. The first waiting call
# is approved, the second rejected, the third answered with the scientist's own result, and
# the rest approved as they come, until the session ends.
#   make build tools && scripts/record-tooltrust.sh
set -euo pipefail
cd "$(dirname "$0")/.."
A=127.0.0.1:7311
R=$(mktemp -d)
bin/temporal server start-dev --ip 127.0.0.1 --port 7311 --ui-port 8311 --headless --log-level error \
  --search-attribute SessionStatus=Keyword --search-attribute ScientistId=Keyword \
  --search-attribute HypothesisCount=Int --search-attribute TopElo=Double \
  --search-attribute TotalTokens=Int --search-attribute CostUSD=Double --search-attribute SessionType=Keyword \
  --search-attribute ConversationId=Keyword --search-attribute ParentSession=Keyword \
  --search-attribute SourceCheckpoint=Int > $R/server.log 2>&1 &
SERVER=$!
WORKER=
trap 'kill $WORKER $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do bin/temporal operator cluster health --address $A >/dev/null 2>&1 && break; sleep 0.5; done
go build -o $R/cw ./worker && go build -o $R/st ./starter && go build -o $R/lit ./literature
cat > $R/tools.yaml <<YAML
servers:
  - name: literature
    command: [$R/lit, --library, $PWD/testdata/library, --index, $R/index]
    rate: 20
    trust: external
YAML
(cd $R && TEMPORAL_ADDRESS=$A COSCI_STORE=$R/sessions ./cw --tools tools.yaml --offline-latency 100ms > worker.log 2>&1) &
WORKER=$!
export TEMPORAL_ADDRESS=$A COSCI_STORE=$R/sessions
id=session-tooltrust
$R/st start --id $id --goal "Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease" \
  --max-hypotheses 6 --review-types initial,full --seed 3 \
  --tools literature.search,literature.fetch
# waiting: the ids of the calls that wait for an answer now.
waiting() {
  $R/st status $id --json | python3 -c 'import json,sys; print(" ".join(w["id"] for w in json.load(sys.stdin).get("waiting") or [] if not w.get("decision")))'
}
answered=0
while :; do
  state=$($R/st status $id --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
  case $state in completed|failed) break;; esac
  for call in $(waiting); do
    case $answered in
      0) $R/st status $id | grep -A4 "waiting for you" || true # the whole call, as the scientist reads it
         $R/st answer-tool $id --call $call --approve;;
      1) $R/st answer-tool $id --call $call --reject --reason "paywalled: not in the lab's subscription";;
      2) $R/st answer-tool $id --call $call --result "Lee et al. (2024) found that microglial depletion halved tau spread between connected regions in P301S mice.";;
      *) $R/st answer-tool $id --call $call --approve >/dev/null;;
    esac || true # the session may have moved on: a refused answer is not a failure here
    answered=$((answered + 1))
  done
  sleep 0.3
done
$R/st result $id
echo "answered $answered waiting calls"
runs=$(bin/temporal workflow list --address $A --query "WorkflowId='$id'" -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(r["execution"]["runId"]+":"+r["status"] for r in d))')
for r in $runs; do
  rid=${r%%:*}; st=${r##*:}
  case $st in *CONTINUED*) f=workflows/testdata/session-tooltrust.json;; *) f=workflows/testdata/session-tooltrust-closing.json;; esac
  [ "$(echo $runs | wc -w)" = 1 ] && f=workflows/testdata/session-tooltrust.json
  bin/temporal workflow show --address $A --workflow-id $id --run-id $rid -o json > $f
  echo "$st -> $f ($(wc -c < $f) bytes)"
done
