#!/usr/bin/env bash
# Records workflows/testdata/session-needs.json: a grounded session of the needs-memo,
# serial-checkpoints and trust-tool versions, on a dev server and a worker of its own (port
# 7318). Every fetch waits for the scientist, so the session's needs memo changes as calls
# wait and are answered; the scientist trusts literature.fetch for the session (its waiting
# calls are approved), then undoes it; asks for a refinement and confirms it (a proposal
# open, then confirmed, as the memo says); then the waiting calls are answered as
# record-grounded.sh does, until the session ends.
#   make build tools && scripts/record-needs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
start_dev_server 7318 8318
go build -o $R/cw ./worker && go build -o $R/st ./starter && go build -o $R/lit ./literature
write_literature_tools
start_worker --tools tools.yaml --offline-latency 100ms
id=session-needs
$R/st start --id $id --goal "Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease" \
  --max-hypotheses 8 --review-types initial,full --seed 5 \
  --tools literature.search,literature.fetch --approve-tools literature.fetch
until [ -n "$(waiting $id)" ]; do sleep 0.2; done
$R/st trust-tool $id --tool literature.fetch --as ada
$R/st untrust-tool $id --tool literature.fetch --as ada
proposal=$($R/st ask $id "Please focus on microglia." --as ada | grep -o 'm-[0-9]*\.[0-9]' | head -1)
$R/st ask $id --confirm "$proposal" --as ada
answer_until_ended $id
$R/st result $id
echo "answered $answered waiting calls"
record_runs $id session-needs
