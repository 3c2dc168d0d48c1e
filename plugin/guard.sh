#!/bin/sh
# PreToolUse hook: `wt guard` routes by the subagent's name (wt-<runId>-task-<p>-<t>) and decides.
# If wt is not installed, a wt run's subagent is blocked (exit 2) rather than left unguarded;
# every other call gets no decision.
if command -v wt >/dev/null 2>&1; then
    exec wt guard
fi
if grep -q '"agent_type"[[:space:]]*:[[:space:]]*"wt-' 2>/dev/null; then
    echo "wt is not on PATH, so this wt worker cannot be guarded; install wt (see the spectacular README)" >&2
    exit 2
fi
exit 0
