#!/usr/bin/env bash
# Records workflows/testdata/session-packed.json and session-packed-closing.json: a session
# of the closing-run-sooner and packed-ranking versions, on a dev server and a worker of its
# own (port 7318). Its one research run passes 100 events, so the finished session closes
# in a run of its own, which reads the final checkpoint's ranking back in packed pages.
#   make tools && scripts/record-packed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
start_dev_server 7318 8318
go build -o $R/cw ./worker && go build -o $R/st ./starter
start_worker
id=session-packed
$R/st start --id $id --goal "Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease" \
  --max-hypotheses 12 --review-types initial,full --seed 5
until bin/temporal workflow query --address "$A" --workflow-id "$id" --type progress | grep -q '"hypotheses_generated":[4-9]'; do sleep 0.2; done
$R/st feedback $id --toward "in vivo models" >/dev/null
$R/st result $id
record_runs $id session-packed
