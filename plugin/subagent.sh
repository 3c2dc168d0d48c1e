#!/bin/sh
# SubagentStart / SubagentStop: records that a wt worker (spectacular:wt-worker-<k>) started on
# the lease of its slot, or returned, so `spectacular-wt step` neither hands its task out again
# nor checks it before the worker is back. Every other subagent is ignored. Never blocks: exit 2
# would keep a returning subagent working, so a record that fails exits 1.
command -v spectacular-wt >/dev/null 2>&1 || exit 0
exec spectacular-wt hook "$1"
