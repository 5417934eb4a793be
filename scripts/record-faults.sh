#!/usr/bin/env bash
# Records workflows/testdata/session-store-faults.json: a session through both kinds of
# store fault, on a dev server and a worker of its own (port 7299). Its directories are
# made immutable (chattr +i, so run it as root on ext4) until the session suspends for an
# unusable store and resumes by itself; then a hypothesis record is truncated until the
# session suspends naming it, repaired and resumed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
start_dev_server 7299 8299
trap 'find $R/sessions -type d -exec chattr -i {} + 2>/dev/null; stop_all' EXIT
go build -o $R/cw ./worker && go build -o $R/st ./starter
start_worker --offline-latency 150ms
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
record_runs $id session-store-faults
