#!/bin/sh
# TeammateIdle / TaskCompleted gate for wt workers: refuses (exit 2, reason on stderr) a worker
# whose branch has no commit or whose worktree has uncommitted files. Calls `spectacular-wt`, the
# name only this project installs.
command -v spectacular-wt >/dev/null 2>&1 || exit 0
exec spectacular-wt hook "$1"
