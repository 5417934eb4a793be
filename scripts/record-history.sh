#!/usr/bin/env bash
# Records the history of a steered session for workflows/replay_test.go: suspend, a
# malformed signal, refine-goal, checkpoint, add-hypothesis, feedback, review and set-budget
# and a message from another session while suspended, resume, then terminate after a few
# more rounds (by then the meta-review has forked a subagent or two):
#   make server & make worker &   # then:
#   scripts/record-history.sh session-steered
# Run it against a worker built from the workflow code the history should pin. Histories
# already in testdata/ must keep replaying: a workflow change that breaks them goes behind
# workflow.GetVersion.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/record-history.sh NAME}
t=bin/temporal
id="record-$name-$(date +%s)"

$t workflow start --task-queue cosci --type ResearchSession --workflow-id "$id" --input \
  '{"research_goal": "Find druggable mechanisms that slow tau propagation", "scientist_id": "ada",
    "config": {"max_hypotheses": 16, "review_types": ["initial", "full"]}}' >/dev/null
until $t workflow query --workflow-id "$id" --type progress | grep -q '"hypotheses_generated":[48]'; do sleep 0.2; done
$t workflow update execute --workflow-id "$id" --name suspend --input '{"reason": "reading"}' >/dev/null
$t workflow signal --workflow-id "$id" --name resume --input '"not an object"'
$t workflow signal --workflow-id "$id" --name refine-goal --input '{"focus": "microglia"}'
$t workflow signal --workflow-id "$id" --name checkpoint
$t workflow update execute --workflow-id "$id" --name add-hypothesis --input \
  '{"title": "Microglia carry tau", "statement": "Microglia carry tau between synapses.", "testable_predictions": ["Depleting microglia slows spread"]}' >/dev/null
$t workflow signal --workflow-id "$id" --name feedback --input '{"toward": "in vivo models"}'
$t workflow signal --workflow-id "$id" --name review --input '{"hypothesis_id": "h-0001", "score": 8, "critique": "Strong."}'
$t workflow update execute --workflow-id "$id" --name set-budget --input '{"token_budget": 5000000}' >/dev/null
$t workflow signal --workflow-id "$id" --name message --input '{"from": "a colleague", "type": "user", "text": "Look at astrocytes too."}'
$t workflow update execute --workflow-id "$id" --name resume >/dev/null
until $t workflow query --workflow-id "$id" --type progress | grep -q '"rounds":[3-9]'; do sleep 0.2; done
$t workflow signal --workflow-id "$id" --name terminate --input '{"reason": "enough for the recording"}'
$t workflow result --workflow-id "$id" >/dev/null
$t workflow show --workflow-id "$id" -o json > "workflows/testdata/$name.json"
echo "recorded workflows/testdata/$name.json from $id"
