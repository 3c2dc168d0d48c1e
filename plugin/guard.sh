#!/bin/sh
# PreToolUse hook: `spectacular-wt guard` routes by the subagent's type (spectacular:wt-worker-<k>,
# a worker slot that `wt step` leased to a task; wt-<name>, the agent of the team worktree
# .worktrees/<name> that `wt create` made) and decides. It calls `spectacular-wt`, the name only
# this project installs, so another `wt` first on PATH cannot answer (worktrunk's would block every
# call). If it is not installed, a wt worker or team agent is blocked (exit 2) rather than left
# unguarded; a run's own generated agents (wt-<runId>-…) carry their own guard. The main session's
# own plain `wt step` and `wt status` calls are approved; every other call gets no decision.
if command -v spectacular-wt >/dev/null 2>&1; then
    exec spectacular-wt guard --approve-orchestrator
fi
input=$(cat)
agent='"agent_type"[[:space:]]*:[[:space:]]*"'
if printf '%s' "$input" | grep -Eq "$agent(spectacular:)?wt-" &&
    ! printf '%s' "$input" | grep -Eq "${agent}wt-[0-9a-f]{6}(-main|-task-|\")"; then
    echo "spectacular-wt is not on PATH, so this wt agent cannot be guarded; install it with \`cargo install --locked --path <spectacular clone>\` (it installs wt and spectacular-wt)" >&2
    exit 2
fi
exit 0
