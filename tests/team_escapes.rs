//! A team worktree's agent trying to get out with only what the plugin's hook lets it do: its
//! Bash calls run inside `wt sandbox` (which lets it write its worktree, its `.git` link and its
//! git admin folder), its own `wt push|pr|rebase …` run outside it. Each test plays the agent
//! `wt-api` through `wt guard` as the plugin calls it (no `--root`), runs what the hook lets
//! through as rewritten, and checks that no program of the agent's choice ran outside the sandbox
//! and nothing outside the worktree was written: wt's git, which runs outside the sandbox, never
//! follows what the agent left in its git files.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::TestRepo;
use serde_json::{Value, json};

/// The plugin's PreToolUse hook timeout (plugin/hooks.json, and the generated agents'): Claude
/// Code runs a call whose hook has not answered by then.
const HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// The agent `wt-api`, its session in `cwd`.
struct Agent<'a> {
    repo: &'a TestRepo,
    cwd: PathBuf,
}

/// What became of one Bash call.
#[derive(Debug)]
enum Call {
    /// The hook refused it (its reason) or blocked it (exit 2, its stderr).
    Refused(String),
    /// It ran as the hook rewrote it.
    Ran { command: String, out: Output },
}

impl Call {
    /// The rewritten command ran outside `wt sandbox` (the agent's own wt command) and failed.
    fn assert_ran_unwrapped_and_failed(&self, with: &str) {
        let Call::Ran { command, out } = self else { panic!("refused: {self:?}") };
        assert!(!command.contains(" sandbox --root "), "it is the agent's own wt command: {command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command} went ahead: {}", String::from_utf8_lossy(&out.stdout));
        assert!(stderr.contains(with), "{command}: {stderr}");
    }
}

impl<'a> Agent<'a> {
    fn new(repo: &'a TestRepo) -> Agent<'a> {
        Agent { repo, cwd: repo.root.clone() }
    }

    fn worktree(&self) -> PathBuf {
        self.repo.team_worktree("api")
    }

    /// `wt guard` on one Bash call; its output, and how long it took to answer.
    fn hook(&self, tool_input: Value) -> (Output, Duration) {
        let hook = json!({
            "cwd": self.cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "agent_type": "wt-api", "tool_input": tool_input,
        });
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_wt"))
            .arg("guard")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), hook.to_string().as_bytes()).unwrap();
        // Claude Code would have given up on the hook (and run the call) long before.
        while child.try_wait().unwrap().is_none() && started.elapsed() < 3 * HOOK_TIMEOUT {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        (child.wait_with_output().unwrap(), started.elapsed())
    }

    fn bash(&self, command: &str) -> Call {
        self.call(json!({"command": command}))
    }

    fn call(&self, tool_input: Value) -> Call {
        let (out, _) = self.hook(tool_input.clone());
        let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let specific = &value["hookSpecificOutput"];
        if specific["permissionDecision"] != "allow" {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Call::Refused(format!("{} {stderr}", specific["permissionDecisionReason"]));
        }
        let original = tool_input["command"].as_str().unwrap();
        let command = specific["updatedInput"]["command"].as_str().unwrap_or(original).to_owned();
        let out = self.repo.command("bash", &self.cwd).args(["-c", &command]).output().unwrap();
        Call::Ran { command, out }
    }

    /// Runs the Python program `code` in the worktree as the agent's sandboxed Bash call (from a
    /// script outside the worktree, which the guard cannot read and so leaves to the kernel):
    /// what it made in the git files its sandbox may write is found and undone when it ends.
    fn sandboxed_python(&self, code: &str) -> Output {
        let script = self.repo.scratch.join("agent.py");
        std::fs::write(&script, code).unwrap();
        let command = format!("cd {} && python3 {}", self.worktree().display(), script.display());
        match self.bash(&command) {
            Call::Ran { command, out } if command.contains(" --check ") => out,
            other => panic!("the agent's own command did not run in its checked sandbox: {other:?}"),
        }
    }

    /// Makes what `code` makes as if that check had missed it (run directly, as the sandbox lets
    /// the agent write those files): wt's own commands must still not follow it.
    fn planted_past_the_check(&self, code: &str) {
        let out = self.repo.command("python3", &self.worktree()).args(["-c", code]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// A repository with the team worktrees api and web on main.
fn team() -> TestRepo {
    let repo = TestRepo::new();
    repo.wt(&["create", "api", "--base", "main"]).ok();
    repo.wt(&["create", "web", "--base", "main"]).ok();
    repo
}

/// The worktree api's admin folder, `.git/worktrees/api`.
fn admin(repo: &TestRepo) -> PathBuf {
    repo.root.join(".git/worktrees/api")
}

#[test]
fn a_rebase_the_agent_planted_in_its_git_folder_runs_none_of_its_exec_lines() {
    let repo = team();
    let agent = Agent::new(&repo);
    let ran = repo.scratch.join("exec-ran");
    // Its sandbox may write its admin folder (a commit writes HEAD, index and logs there), so
    // it can leave a rebase "under way" whose to-do list runs a program: `git rebase
    // --continue`, which `wt rebase api` runs outside the sandbox, would run it.
    agent.planted_past_the_check(&format!(
        "import os, subprocess\n\
         state = '{admin}/rebase-merge'\n\
         os.makedirs(state)\n\
         head = subprocess.check_output(['git', 'rev-parse', 'HEAD'], text=True)\n\
         for name, text in [('head-name', 'refs/heads/api\\n'), ('onto', head), ('orig-head', head),\n\
                            ('interactive', ''), ('done', ''), ('msgnum', '0\\n'), ('end', '1\\n'),\n\
                            ('git-rebase-todo', 'exec touch {ran}\\n')]:\n\
         \x20   open(os.path.join(state, name), 'w').write(text)\n",
        admin = admin(&repo).display(),
        ran = ran.display(),
    ));
    for command in ["wt rebase api", "wt rebase api --abort"] {
        agent.bash(command).assert_ran_unwrapped_and_failed("git-rebase-todo holds `exec touch");
        assert!(!ran.exists(), "`{command}` ran the agent's exec line outside the sandbox");
    }
}

#[test]
fn a_git_link_pointed_at_a_repository_the_agent_made_runs_none_of_its_programs() {
    let repo = team();
    let remote = repo.scratch.join("remote.git");
    repo.git(&["init", "--quiet", "--bare", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    let ran = repo.scratch.join("config-program-ran");
    // In its worktree the agent makes a repository of its own with a worktree on branch api,
    // whose config names programs git runs for a push, and points its `.git` link there: wt,
    // finding the repository from the worktree, would take that one for the real one.
    let worktree = repo.team_worktree("api");
    let fake = worktree.join(".fake");
    Agent::new(&repo).planted_past_the_check(&format!(
        "import os, subprocess\n\
         env = {{k: v for k, v in os.environ.items() if not k.startswith('GIT_OBJECT') and 'ALTERNATE' not in k}}\n\
         def run(*args, cwd='{fake}'):\n\
         \x20   subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True)\n\
         os.makedirs('{fake}')\n\
         run('git', 'init', '-q', '-b', 'main')\n\
         run('git', 'commit', '-q', '--allow-empty', '-m', 'fake')\n\
         run('git', 'worktree', 'add', '-q', '.worktrees/api', '-b', 'api')\n\
         run('git', 'config', 'remote.origin.url', '{remote}')\n\
         run('git', 'config', 'remote.origin.uploadpack', 'touch {ran}; git-upload-pack')\n\
         run('git', 'config', 'remote.origin.receivepack', 'touch {ran}; git-receive-pack')\n\
         run('gs', '--no-prompt', 'repo', 'init', '--trunk', 'main')\n\
         run('gs', '--no-prompt', 'branch', 'track', 'api', '--base', 'main', cwd='{fake}/.worktrees/api')\n\
         open('{dot_git}', 'w').write('gitdir: {fake}/.git/worktrees/api\\n')\n",
        fake = fake.display(),
        remote = remote.display(),
        ran = ran.display(),
        dot_git = worktree.join(".git").display(),
    ));
    let link = std::fs::read_to_string(worktree.join(".git")).unwrap();
    assert!(link.contains("/.fake/.git/worktrees/api"), "the link was swapped: {link}");
    // Its session in the main checkout, or in the worktree (where `cd` may have left it).
    for cwd in [repo.root.clone(), worktree.clone()] {
        let agent = Agent { repo: &repo, cwd };
        for command in ["wt push api", "wt pr api", "wt rebase api"] {
            let call = agent.bash(command);
            match &call {
                Call::Ran { out, .. } => assert!(!out.status.success(), "{command} went ahead: {call:?}"),
                Call::Refused(why) => panic!("the hook refused `{command}`, which wt refuses itself: {why}"),
            }
            assert!(!ran.exists(), "`{command}` ran a program the agent's repository names: {call:?}");
        }
    }
    assert_eq!(repo.git(&["ls-remote", "origin"]), "", "nothing was pushed");
}

#[test]
fn a_symlink_in_the_worktrees_git_folder_is_not_written_through() {
    let repo = team();
    let agent = Agent::new(&repo);
    let victim = repo.scratch.join("victim.txt");
    std::fs::write(&victim, "mine\n").unwrap();
    // The worktree's reflog, a symlink to a file outside: a rebase outside the sandbox appends
    // to it a line per step, with the subjects of the agent's commits.
    let plant = format!(
        "import os\nif os.path.lexists('{log}'):\n    os.remove('{log}')\nos.symlink('{victim}', '{log}')\n",
        log = admin(&repo).join("logs/HEAD").display(),
        victim = victim.display(),
    );
    // Made in its sandbox, the symlink is gone when the command ends, which fails for it.
    let out = agent.sandboxed_python(&plant);
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!admin(&repo).join("logs/HEAD").is_symlink(), "{}", String::from_utf8_lossy(&out.stderr));
    agent.planted_past_the_check(&plant);
    repo.git(&["commit", "--quiet", "--allow-empty", "-m", "main moves on"]);
    agent.bash("wt rebase api").assert_ran_unwrapped_and_failed("logs/HEAD is a symlink");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n", "written through the symlink");
    // As for the lead's own `wt rebase api`.
    let lead = repo.wt(&["rebase", "api"]);
    assert_eq!(lead.code(), 6, "{}", lead.stderr());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n", "written through the symlink");
}

#[test]
fn a_guard_that_cannot_read_what_it_must_blocks_the_call_before_claude_code_gives_up_on_it() {
    let repo = team();
    let agent = Agent::new(&repo);
    let worktree = agent.worktree();
    // A fifo where the guard reads: a script the command runs (the guard reads a script in the
    // worktree before it runs), then the worktree's `gitdir` record in its admin folder (read on
    // every call). Nobody writes to them, so the guard's read would wait for ever; Claude Code
    // runs a call whose hook times out, as written, outside the sandbox.
    let script = format!("import os\nos.mkfifo('{}')\n", worktree.join("build.sh").display());
    agent.sandboxed_python(&script);
    let gitdir = admin(&repo).join("gitdir");
    for (command, fifo) in [("bash build.sh", None), ("ls", Some(&gitdir))] {
        if let Some(fifo) = fifo {
            // In a git folder, the check at the end of a sandboxed command would remove it.
            agent.planted_past_the_check(&format!(
                "import os\nos.remove('{fifo}')\nos.mkfifo('{fifo}')\n",
                fifo = fifo.display()
            ));
        }
        let command = format!("cd {} && {command}", worktree.display());
        let (out, took) = agent.hook(json!({"command": command}));
        assert!(took < HOOK_TIMEOUT, "{command}: the hook answered after {took:?}");
        assert_eq!(out.status.code(), Some(2), "{command}: blocked: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("the call is blocked"), "{out:?}");
    }
}

#[test]
fn the_agents_own_branch_changing_commands_run_alone_in_the_foreground() {
    let repo = team();
    let agent = Agent::new(&repo);
    let worktree = agent.worktree();
    // Beside one of them, a command of the agent could change the worktree's git files between
    // wt's check and git's reading them.
    for command in ["wt push api", "wt pr api", "wt rebase api"] {
        let background = agent.call(json!({"command": command, "run_in_background": true}));
        assert!(matches!(&background, Call::Refused(why) if why.contains("foreground")), "{background:?}");
    }
    let (out, _) = agent.hook(json!({"command": format!("cd {} && sleep 5", worktree.display())}));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sleeping = value["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap().to_owned();
    let mut running = repo.command("bash", &repo.root).args(["-c", &sleeping]).spawn().unwrap();
    let started = Instant::now();
    let refused = loop {
        let (out, _) = agent.hook(json!({"command": "wt rebase api"}));
        let value: Value = serde_json::from_slice(&out.stdout).unwrap();
        let specific = &value["hookSpecificOutput"];
        if specific["permissionDecision"] == "deny" || started.elapsed() > Duration::from_secs(4) {
            break specific["permissionDecisionReason"].as_str().unwrap_or_default().to_owned();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(refused.contains("waits while a command of yours still runs"), "{refused}");
    let info = agent.bash("wt info api --json");
    assert!(matches!(&info, Call::Ran { out, .. } if out.status.success()), "reading goes on: {info:?}");
    running.wait().unwrap();
    match agent.bash("wt rebase api") {
        Call::Ran { out, .. } => assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr)),
        other => panic!("once it ended: {other:?}"),
    }
}

#[test]
fn a_hook_the_agent_makes_executable_from_its_sandbox_is_made_inert_again_when_the_command_ends() {
    let repo = team();
    // A hook the user keeps but left off: the kernel keeps the agent from writing it, but not
    // from a chmod, and the next `git commit` in the user's checkout would run it unsandboxed.
    let hook = repo.root.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\ntouch \"$HOME/hook-ran\"\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = repo.root.join(".git/config");
    let config_mode = std::fs::metadata(&config).unwrap().permissions().mode();
    let agent = Agent::new(&repo);
    let out = agent.sandboxed_python(&format!(
        "import os\nos.chmod({hook:?}, 0o755)\nos.chmod({config:?}, 0)\n",
        hook = hook.display().to_string(),
        config = config.display().to_string()
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the command fails for what it did: {stderr}");
    assert!(stderr.contains("changed the mode of") && stderr.contains("wt put it back"), "{stderr}");
    assert_eq!(std::fs::metadata(&hook).unwrap().permissions().mode() & 0o777, 0o644, "{stderr}");
    assert_eq!(std::fs::metadata(&config).unwrap().permissions().mode(), config_mode, "{stderr}");
}

#[test]
fn other_branches_the_agent_moves_from_its_sandbox_are_put_back_when_the_command_ends() {
    let repo = team();
    repo.team_commit("api", "api.txt");
    repo.team_commit("web", "web.txt");
    let (main, web) = (repo.git(&["rev-parse", "main"]), repo.git(&["rev-parse", "web"]));
    let agent = Agent::new(&repo);
    // The kernel must let a commit write refs/heads (a lock file renamed over the branch), so
    // from inside its sandbox the agent can point any branch anywhere, or make or delete one.
    let common = repo.root.join(".git");
    let code = format!(
        "import os\nc = {common:?}\nmine = open(c + '/refs/heads/api').read()\n\
         for ref in ['main', 'web', 'evil']:\n    open(c + '/refs/heads/' + ref, 'w').write(mine)\n",
        common = common.display().to_string()
    );
    let script = repo.scratch.join("agent.py");
    std::fs::write(&script, code).unwrap();
    let call = agent.bash(&format!("cd {} && python3 {}", agent.worktree().display(), script.display()));
    let Call::Ran { command, out } = call else { panic!("refused: {call:?}") };
    assert!(command.contains(" sandbox --root ") && command.contains(" --check "), "{command}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the command fails for what it did: {stderr}");
    assert!(stderr.contains("wt put it back"), "{stderr}");
    assert_eq!(repo.git(&["rev-parse", "main"]), main, "main is back: {stderr}");
    assert_eq!(repo.git(&["rev-parse", "web"]), web, "web is back: {stderr}");
    assert!(!repo.branch_exists("evil"), "the branch it made is gone: {stderr}");
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "the user's checkout shows nothing staged");

    // Its own commits on its own branch still go through, checked and quiet.
    let commit = agent.bash(&format!(
        "cd {} && echo more > more.txt && git add more.txt && git commit --quiet -m more",
        agent.worktree().display()
    ));
    let Call::Ran { out, .. } = commit else { panic!("refused: {commit:?}") };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(repo.subjects("main", "api"), ["api: api.txt", "more"]);
}
