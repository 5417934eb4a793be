#!/usr/bin/env bash
# Records workflows/testdata/session-grounded.json: a session whose agents call tools, on a
# dev server and a worker of its own (port 7298). The worker serves the in-box literature
# server over testdata/library; the session may call literature.search and literature.fetch,
# and every fetch waits for the scientist. The first waiting call is approved, the second
# rejected, the third answered with the scientist's own result, and the rest approved as they
# come, until the session ends.
#   make build tools && scripts/record-grounded.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
start_dev_server 7298 8298
go build -o $R/cw ./worker && go build -o $R/st ./starter && go build -o $R/lit ./literature
write_literature_tools
start_worker --tools tools.yaml --offline-latency 100ms
id=session-grounded
$R/st start --id $id --goal "Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease" \
  --max-hypotheses 10 --review-types initial,full --seed 3 \
  --tools literature.search,literature.fetch --approve-tools literature.fetch
answer_until_ended $id
$R/st result $id
echo "answered $answered waiting calls"
record_runs $id session-grounded
