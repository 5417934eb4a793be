#!/usr/bin/env bash
# The lab's demo (`make demo-lab`): one research session on the embedded default (dev server
# + offline provider) with the lab's table, one experiment on a top hypothesis planned by the
# analyst and confirmed (pre-registered in the session's history), its result returned by
# the simulated lab (scripts/simlab: the true effect follows the hypothesis's hidden
# quality), the registered analysis run in the sandbox, the standing and the report updated;
# the session left at the desk. Stops whatever it started on exit, Ctrl-C included.
#
# Environment: TEMPORAL_ADDRESS (a server that answers there is used; default
# 127.0.0.1:7233), COSCI_STORE (the session store; default .data/sessions), COSCI_DEMO_DESK
# (the desk's address), COSCI_DEMO_ID (the session's id), COSCI_DEMO_HYPOTHESES (default 12),
# COSCI_DEMO_LATENCY (per turn, default 300ms); B and D as scripts/lib.sh's demo_up reads them.
set -euo pipefail
# Its logs hold the desk's sign-in link, token included: for this user alone.
umask 077
cd "$(dirname "$0")/.."
. scripts/lib.sh
B=${COSCI_BIN:-bin} D=${COSCI_DEMO_DATA:-.data}
demo_up

id="${COSCI_DEMO_ID:-demo-lab-$(date +%s)}"
starter() { "$B/starter" "$@"; }
# field JSON-PATH: one value of the JSON on stdin, by a Python expression on d.
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
status_reason() { starter status "$id" --json | field 'd.get("reason") or ""'; }
status_state() { starter status "$id" --json | field 'd["state"]'; }

echo
echo "1. The session, and the lab's table (the simulated lab's earlier data, two arms, no effect):"
default_goal="Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease"
starter start --id "$id" --goal "${COSCI_DEMO_GOAL:-$default_goal}" \
  --max-hypotheses "${COSCI_DEMO_HYPOTHESES:-12}" --review-types initial,full >/dev/null
echo "Follow it at the desk (this link signs you in): http://$DESK_ADDR/s/$id?token=$DESK_TOKEN"
"$B/simlab" --pilot --out "$D/$id-pilot.csv"
starter data add --session "$id" --table assay "$D/$id-pilot.csv"

# The experiment is planned on the ranking so far: the session is suspended meanwhile, so
# that it cannot end before the plan is confirmed (a confirmed experiment holds it open).
echo
hyps=${COSCI_DEMO_HYPOTHESES:-12}
echo "2. The tournament runs; once it holds $((hyps * 2 / 3)) hypotheses and has played as many matches, its top one gets an experiment."
for _ in $(seq 1 240); do
  ready=$(starter state "$id" --json | field "len(d.get('hypotheses') or []) >= $((hyps * 2 / 3)) and sum(h['wins'] for h in d.get('hypotheses') or []) >= $((hyps * 2 / 3))")
  [ "$ready" = True ] && break
  [ "$(status_state)" = active ] || { echo "the session ended before it had hypotheses: see $D/worker.log"; exit 1; }
  sleep 0.5
done
starter suspend "$id" --reason "planning an experiment" >/dev/null
top=$(starter state "$id" --json | field 'd["hypotheses"][0]["id"]')
starter experiment plan --session "$id" --hypothesis "$top" | tee "$D/$id-plan.txt"
experiment=$(sed -n 's/^experiment \(x-[0-9]*\) .*/\1/p' "$D/$id-plan.txt")
digest=$(sed -n 's/^  digest: *//p' "$D/$id-plan.txt")
starter experiment confirm --session "$id" --experiment "$experiment" --digest "$digest"
starter resume "$id" >/dev/null

echo
echo "3. The session finishes its rounds and waits for the lab:"
for _ in $(seq 1 600); do
  case "$(status_reason)" in "waiting for the lab"*) break;; esac
  [ "$(status_state)" = active ] || break
  sleep 0.5
done
status_reason

echo
echo "4. The simulated lab runs the experiment on $top and exports its table; it is the result:"
"$B/simlab" --session "$id" --hypothesis "$top" --out "$D/$id-result.csv"
starter experiment result --session "$id" --experiment "$experiment" --table assay "$D/$id-result.csv"
for _ in $(seq 1 240); do
  case "$(status_state)" in completed|failed|terminated) break;; esac
  sleep 0.5
done
starter experiment list --session "$id"

echo
echo "5. The report (all of it in $D/report-$id), its lab section:"
starter report "$id" --out "$D/report-$id" >/dev/null
section=$(sed -n '/^## Tested in the lab/,/^## [^T]/p' "$D/report-$id/report.md" | sed '$d')
echo "$section"
grep -q "analysis:$experiment-run-1" <<<"$section" || { echo "the report does not cite analysis:$experiment-run-1"; exit 1; }

# The session has ended; the desk still shows it, its experiment and its report.
echo
echo "The session stays at the desk: http://$DESK_ADDR/s/$id?token=$DESK_TOKEN"
echo "After the demo, the same link works once the desk is started again with:"
echo "  COSCI_DESK_TOKEN=$DESK_TOKEN $B/desk --listen $DESK_ADDR --library testdata/library"
if [ -t 0 ]; then
  read -r -p "Press Enter to stop the demo. " _ || true
fi
