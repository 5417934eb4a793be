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
. scripts/lib.sh
start_dev_server 7311 8311
go build -o $R/cw ./worker && go build -o $R/st ./starter && go build -o $R/lit ./literature
write_literature_tools external
start_worker --tools tools.yaml --offline-latency 100ms
id=session-tooltrust
$R/st start --id $id --goal "Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease" \
  --max-hypotheses 6 --review-types initial,full --seed 3 \
  --tools literature.search,literature.fetch
answer_until_ended $id --show-first
$R/st result $id
echo "answered $answered waiting calls"
record_runs $id session-tooltrust
