#!/bin/sh
# TeammateIdle / TaskCompleted gate for wt workers: refuses (exit 2, reason on stderr) a worker
# whose branch has no commit or whose worktree has uncommitted files, and a team teammate (wt-<name>)
# going idle with an open change request and no `wt poll`, or completing a task with uncommitted
# files or a failing verify (which may take minutes: the hook's timeout allows it). Calls
# `spectacular-wt`, the name only this project installs.
command -v spectacular-wt >/dev/null 2>&1 || exit 0
exec spectacular-wt hook "$1"
