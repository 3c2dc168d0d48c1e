#!/bin/sh
# PreToolUse hook: `wt guard` routes by the subagent's type (spectacular:wt-worker-<k>, a worker
# slot that `wt step` leased to a task) and decides. If wt is not installed, a wt worker is
# blocked (exit 2) rather than left unguarded. The main session's own plain `wt step` and
# `wt status` calls are approved; every other call gets no decision.
if command -v wt >/dev/null 2>&1; then
    exec wt guard --approve-orchestrator
fi
if grep -Eq '"agent_type"[[:space:]]*:[[:space:]]*"(spectacular:)?wt-worker-' 2>/dev/null; then
    echo "wt is not on PATH, so this wt worker cannot be guarded; install wt (see the spectacular README)" >&2
    exit 2
fi
exit 0
