#!/bin/sh
# TeammateIdle / TaskCompleted gate for wt workers: refuses (exit 2, reason on stderr) a worker
# whose branch has no commit or whose worktree has uncommitted files.
command -v wt >/dev/null 2>&1 || exit 0
exec wt hook "$1"
