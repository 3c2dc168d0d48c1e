#!/usr/bin/env bash
# The least a plain shell script must do to build the same stack as bench/run-plan.toml:
# a main worktree, 2 stacked branches, 6 branches made in their own worktrees with the agents
# running at once, then stacked in order with git-spice and the task worktrees removed.
# No state, no lock, no checks. Run inside the repository; $1 is the run id.
set -euo pipefail
id=$1
gs() { command gs --no-prompt "$@" </dev/null; }
commit() { git -C "$1" add --all && git -C "$1" commit --quiet -m "$2"; }

gs repo init --trunk main 2>/dev/null
main=.worktrees/$id-main
git worktree add --quiet --detach "$main" main
below=main
for t in 1 2; do
    branch=$id-task-1-$t-seq
    (cd "$main" && gs branch create "$branch" --target "$below" --no-commit 2>/dev/null)
    echo "$t" >"$main/seq$t.txt"
    commit "$main" "[Task 1.$t] seq $t"
    below=$branch
done
phase_base=$below
for t in 1 2 3 4 5 6; do
    wt=.worktrees/$id-task-2-$t
    git worktree add --quiet --detach "$wt" "$phase_base"
    (cd "$wt" && gs branch create "$id-task-2-$t-par" --target "$phase_base" --no-commit 2>/dev/null)
done
for t in 1 2 3 4 5 6; do
    (wt=.worktrees/$id-task-2-$t; echo "$t" >"$wt/par$t.txt"; commit "$wt" "[Task 2.$t] par $t") &
done
wait
for t in 1 2 3 4 5 6; do git -C ".worktrees/$id-task-2-$t" checkout --quiet --detach; done
below=$id-task-2-1-par
for t in 2 3 4 5 6; do
    (cd "$main" && gs upstack onto "$below" --branch "$id-task-2-$t-par" 2>/dev/null)
    below=$id-task-2-$t-par
done
for t in 1 2 3 4 5 6; do git worktree remove ".worktrees/$id-task-2-$t"; done
