#!/usr/bin/env bash
# Records workflows/testdata/session-conversetools.json: a grounded session the scientist
# talks with, on a dev server and a worker of its own (port 7317), of the converse-tools
# version: the converse agent may call the session's tools. The worker serves the in-box
# literature server over testdata/library; the session may call literature.search and
# literature.fetch, and every fetch waits for the scientist. A question about the literature
# searches, and its fetch, which would wait, is not made; a question about the session calls
# nothing; then the research turns' waiting calls are answered as record-grounded.sh does,
# until the session ends.
#   make build tools && scripts/record-conversetools.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
start_dev_server 7317 8317
go build -o $R/cw ./worker && go build -o $R/st ./starter && go build -o $R/lit ./literature
write_literature_tools
start_worker --tools tools.yaml --offline-latency 100ms
id=session-conversetools
$R/st start --id $id --goal "Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease" \
  --max-hypotheses 6 --review-types initial,full --seed 3 \
  --tools literature.search,literature.fetch --approve-tools literature.fetch
until bin/temporal workflow query --address "$A" --workflow-id "$id" --type progress | grep -q '"hypotheses_generated":[1-9]'; do sleep 0.2; done
$R/st ask $id "What does the literature say about microglia?" --as ada
$R/st ask $id "What is the best hypothesis so far?" --as ada
answer_until_ended $id
$R/st result $id
echo "answered $answered waiting calls"
record_runs $id session-conversetools
