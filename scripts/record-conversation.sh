#!/usr/bin/env bash
# Records the history of a session the scientist talks with, for workflows/replay_test.go:
# a question, a request whose proposal is confirmed (refine-goal), one that is confirmed
# twice (the second refused), a pause and a resume proposed and confirmed, then a terminate
# once the agents' prompts have carried the remarks for a round or two:
#   make server & make worker &   # then:
#   scripts/record-conversation.sh session-conversation
# Run it against a worker built from the workflow code the history should pin.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/record-conversation.sh NAME}
t=${TEMPORAL_CLI:-bin/temporal}
id="record-$name-$(date +%s)"
ask() { $t workflow update execute --workflow-id "$id" --name ask --input "{\"text\": \"$1\", \"by\": \"ada\"}" >/dev/null; }
confirm() { $t workflow update execute --workflow-id "$id" --name confirm --input "{\"proposal\": \"$1\", \"by\": \"ada\"}" >/dev/null; }

$t workflow start --task-queue cosci --type ResearchSession --workflow-id "$id" --input \
  '{"research_goal": "Find druggable mechanisms that slow tau propagation", "scientist_id": "ada",
    "config": {"max_hypotheses": 16, "review_types": ["initial", "full"]}}' >/dev/null
until $t workflow query --workflow-id "$id" --type progress | grep -q '"hypotheses_generated":[48]'; do sleep 0.2; done
ask "What is the best hypothesis so far?"
ask "Please focus on microglia."
confirm m-0004.1
confirm m-0004.1 || true # a proposal is confirmed once: refused
ask "pause"
confirm m-0006.1
ask "Which tool calls wait for me?"
ask "resume"
confirm m-0010.1
until $t workflow query --workflow-id "$id" --type progress | grep -q '"rounds":[3-9]'; do sleep 0.2; done
$t workflow signal --workflow-id "$id" --name terminate --input '{"reason": "enough for the recording", "by": "ada"}'
$t workflow result --workflow-id "$id" >/dev/null
$t workflow show --workflow-id "$id" -o json > "workflows/testdata/$name.json"
echo "recorded workflows/testdata/$name.json from $id"
