#!/usr/bin/env bash
# bench/plain-stack.sh with the stacking `wt run` does since issue #13: the 6 parallel branches
# are created before their agents start, last first, each with `gs branch create --below` the
# next (all at the phase base, recorded in plan order), and one `gs upstack onto` stacks them.
# The least a plain script must do for the same stack with that strategy. $1 is the run id.
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
(cd "$main" && gs branch create "$id-task-2-6-par" --target "$phase_base" --no-commit 2>/dev/null)
for t in 5 4 3 2 1; do
    (cd "$main" && gs branch create "$id-task-2-$t-par" --target "$id-task-2-$((t + 1))-par" --below --no-restack \
        --no-commit 2>/dev/null)
done
git -C "$main" checkout --quiet --detach
for t in 1 2 3 4 5 6; do git worktree add --quiet ".worktrees/$id-task-2-$t" "$id-task-2-$t-par"; done
for t in 1 2 3 4 5 6; do
    (wt=.worktrees/$id-task-2-$t; echo "$t" >"$wt/par$t.txt"; commit "$wt" "[Task 2.$t] par $t") &
done
wait
for t in 1 2 3 4 5 6; do git worktree remove ".worktrees/$id-task-2-$t"; done
(cd "$main" && gs upstack onto "$id-task-2-1-par" --branch "$id-task-2-2-par" 2>/dev/null)
git -C "$main" checkout --quiet "$id-task-2-6-par"
