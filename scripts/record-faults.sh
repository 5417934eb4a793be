#!/usr/bin/env bash
# Records workflows/testdata/session-store-faults.json: a session through both kinds of
# store fault, on a dev server and a worker of its own (port 7299). Its directories are
# made immutable (chattr +i, so run it as root on ext4) until the session suspends for an
# unusable store and resumes by itself; then a hypothesis record is truncated until the
# session suspends naming it, repaired and resumed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
A=127.0.0.1:7299
R=$(mktemp -d)
bin/temporal server start-dev --ip 127.0.0.1 --port 7299 --ui-port 8299 --headless --log-level error \
  --search-attribute SessionStatus=Keyword --search-attribute ScientistId=Keyword \
  --search-attribute HypothesisCount=Int --search-attribute TopElo=Double \
  --search-attribute TotalTokens=Int --search-attribute CostUSD=Double --search-attribute SessionType=Keyword \
  --search-attribute ConversationId=Keyword --search-attribute ParentSession=Keyword \
  --search-attribute SourceCheckpoint=Int > $R/server.log 2>&1 &
SERVER=$!
trap 'find $R/sessions -type d -exec chattr -i {} + 2>/dev/null; kill $WORKER $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do bin/temporal operator cluster health --address $A >/dev/null 2>&1 && break; sleep 0.5; done
go build -o $R/cw ./worker && go build -o $R/st ./starter
(cd $R && TEMPORAL_ADDRESS=$A COSCI_STORE=$R/sessions ./cw --offline-latency 150ms > worker.log 2>&1) &
WORKER=$!
export TEMPORAL_ADDRESS=$A COSCI_STORE=$R/sessions
id=session-store-faults
D=$R/sessions/$id
waitfor() { # waitfor <text>: until the status shows it
  for _ in $(seq 1 240); do $R/st status $id 2>/dev/null | grep -q "$1" && return 0; sleep 0.5; done
  echo "timed out waiting for $1"; $R/st status $id; exit 1
}
$R/st start --id $id --goal "Find druggable mechanisms that slow tau propagation" --max-hypotheses 24 --review-types initial --seed 7
sleep 4
# The store refuses writes of turns: the session suspends, then resumes by itself.
find $D -type d -exec chattr +i {} +
waitfor "cannot be used"
$R/st status $id
sleep 20
find $D -type d -exec chattr -i {} +
waitfor "works again"
sleep 2
# A hypothesis record is truncated: the session suspends naming it; repaired, resumed by hand.
cp $D/hypotheses/h-0002.json $R/h2 && head -c 40 $R/h2 > $D/hypotheses/h-0002.json
waitfor "damaged"
$R/st status $id
cp $R/h2 $D/hypotheses/h-0002.json
$R/st resume $id
$R/st result $id
runs=$(bin/temporal workflow list --address $A --query "WorkflowId='$id'" -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(r["execution"]["runId"]+":"+r["status"] for r in d))')
for r in $runs; do
  rid=${r%%:*}; st=${r##*:}
  case $st in *CONTINUED*) f=workflows/testdata/session-store-faults.json;; *) f=workflows/testdata/session-store-faults-closing.json;; esac
  [ "$(echo $runs | wc -w)" = 1 ] && f=workflows/testdata/session-store-faults.json
  bin/temporal workflow show --address $A --workflow-id $id --run-id $rid -o json > $f
  echo "$st -> $f ($(wc -c < $f) bytes)"
done
