//! The rules a worker follows, written once. The task prompt, the plugin's worker agents
//! (`agents/wt-worker-<k>.md`) and the `worktree-worker` skill are rendered from them (tests keep
//! the plugin's files equal to the renders).

/// The rules for a worker in `worktree` on `branch` (placeholders such as `<worktree>` where the
/// text is written before a task is known).
pub fn worker_rules(worktree: &str, branch: &str) -> Vec<String> {
    vec![
        format!(
            "Your shell does not start in the worktree and `cd` does not persist between Bash calls: begin every \
             Bash command with `cd {worktree} && `."
        ),
        format!("Create and edit files only inside the worktree {worktree}, with absolute paths under it."),
        format!(
            "Commit your work on {branch} when a piece works (`git add -A && git commit -m \"…\"`), or leave it \
             uncommitted: wt commits what is left as `[Task P.T] <name>`."
        ),
        "Do not push, pull, fetch, rebase, switch or create branches, use git-spice, the stash, tags or \
         `git config`: the engine stacks and submits the branches, and a guard refuses those calls with the \
         reason and the allowed way."
            .to_owned(),
        "Stop commands you started in the background before you edit files: while one runs, the guard \
         refuses Write and Edit."
            .to_owned(),
        "The task's verify command (if any) runs after you finish; run it yourself first.".to_owned(),
        "Finish with a short report: what you changed, how you checked it, anything left open.".to_owned(),
    ]
}
