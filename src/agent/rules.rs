//! The rules a worker follows, written once. The task prompt, the plugin's worker agents
//! (`agents/wt-worker-<k>.md`), the `worktree-worker` skill and the generated agents of team
//! worktrees (`team::agent_file`) are rendered from them (tests keep the plugin's files equal to
//! the renders).

/// The rules for a worker in `worktree` on `branch` (placeholders such as `<worktree>` where the
/// text is written before a task is known).
pub fn worker_rules(worktree: &str, branch: &str) -> Vec<String> {
    vec![
        start_in(worktree),
        edit_inside(worktree),
        format!(
            "Commit your work on {branch} when a piece works (`git add -A && git commit -m \"…\"`), or leave it \
             uncommitted: wt commits what is left as `[Task P.T] <name>`."
        ),
        "Do not push, pull, fetch, rebase, switch or create branches, use git-spice, the stash, tags or \
         `git config`: the engine stacks and submits the branches, and a guard refuses those calls with the \
         reason and the allowed way."
            .to_owned(),
        stop_background(),
        "The task's verify command (if any) runs after you finish; run it yourself first.".to_owned(),
        report(),
    ]
}

/// The rules for the agent of a team worktree (`wt create`) in `worktree` on branch `name`: the
/// same workplace rules, but nothing commits for it, and what changes its branch beyond commits
/// goes through the `wt` commands of its worktree (`wt` is how the agent is told to call wt).
pub fn team_worker_rules(worktree: &str, name: &str, wt: &str, verify: Option<&str>) -> Vec<String> {
    let mut rules = vec![
        start_in(worktree),
        edit_inside(worktree),
        format!(
            "Commit your work on `{name}` when a piece works (`git add -A && git commit -m \"…\"`); nothing \
             commits for you, so leave nothing uncommitted when you finish."
        ),
        format!(
            "Do not push, pull, fetch, rebase, switch or create branches, use git-spice, the stash, tags or \
             `git config` yourself: `{wt} rebase|push|pr|poll {name}` do what the branch needs beyond commits, \
             and a guard refuses those calls with the reason and the allowed way."
        ),
        format!(
            "Stop commands you started in the background before you edit files (`{wt} poll {name}` may keep \
             running): while one runs, the guard refuses Write and Edit."
        ),
    ];
    if let Some(verify) = verify {
        rules.push(format!("`{verify}` must pass in the worktree before you finish: run it yourself."));
    }
    rules.push(report());
    rules
}

fn start_in(worktree: &str) -> String {
    format!(
        "Your shell does not start in the worktree and `cd` does not persist between Bash calls: begin every \
         Bash command with `cd {worktree} && `."
    )
}

fn edit_inside(worktree: &str) -> String {
    format!("Create and edit files only inside the worktree {worktree}, with absolute paths under it.")
}

fn stop_background() -> String {
    "Stop commands you started in the background before you edit files: while one runs, the guard \
     refuses Write and Edit."
        .to_owned()
}

fn report() -> String {
    "Finish with a short report: what you changed, how you checked it, anything left open.".to_owned()
}
