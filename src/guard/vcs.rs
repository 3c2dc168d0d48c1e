//! git: what an agent may do in its worktree. The engine owns branches, the stack and
//! everything remote; the repository's shared state (config, stash, refs of other branches) is
//! off limits because other worktrees share it. Only known subcommands run (`git_rules`);
//! global options that load configuration (`-c alias.x=!…`, `--config-env`) or point git
//! elsewhere are refused, and so is a subcommand wt cannot read (`git $(echo push)`).

use super::arg::Arg;
use super::checker::Checker;
use super::state::State;

/// Keys `git -c` may set for one command: display and identity settings. Everything else can
/// run commands (`alias.*`, `core.pager`, `core.sshCommand`, `diff.*.textconv`, `filter.*`),
/// load more configuration (`include.*`) or reach the network (`url.*`, `http.*`).
#[rustfmt::skip]
const SAFE_CONFIG_PREFIXES: &[&str] = &[
    "color.", "advice.", "log.", "pretty.", "status.", "grep.", "blame.", "i18n.", "column.", "user.name",
    "user.email", "user.useconfigonly", "format.pretty", "diff.renames", "diff.noprefix", "diff.mnemonicprefix",
    "diff.algorithm", "diff.context", "diff.interhunkcontext", "diff.relative", "diff.colormoved",
    "diff.statgraphwidth", "merge.conflictstyle", "commit.gpgsign", "tag.gpgsign", "init.defaultbranch",
    "safe.directory", "gc.auto", "rerere.enabled", "fetch.prune",
];

/// Global options that take nothing and change nothing wt follows.
const HARMLESS_GLOBALS: &str = "-p --paginate -P --no-pager --no-replace-objects --literal-pathspecs --glob-pathspecs \
                                --noglob-pathspecs --icase-pathspecs --no-optional-locks --no-lazy-fetch --no-advice \
                                --html-path --man-path --info-path --version --help -h --exec-path";

pub fn git(checker: &mut Checker, args: &[Arg], state: &State) {
    let root = checker.root();
    let Some((i, local)) = global_options(checker, args, state) else { return };
    let Some(sub) = args.get(i) else { return };
    let Some(name) = sub.exact() else {
        return checker.deny(format!(
            "the git subcommand `{}` is not known before it runs; write it out, inside the worktree {root}",
            sub.shown
        ));
    };
    // The subcommand's own rule first: its reason says more than where it runs.
    if !super::git_rules::subcommand(checker, name, &args[i + 1..], &local) {
        return;
    }
    let outside =
        local.cwd.dirs().and_then(|dirs| dirs.iter().find(|d| !checker.wt.contains(&d.physical)).cloned());
    if let Some(dir) = outside.filter(|_| !super::git_rules::only_reads(name)) {
        checker.deny(format!(
            "git {name} would run in {}, another checkout than the worktree {root}; run it there (`cd {root} && git \
             …`)",
            dir.physical.display()
        ));
    }
}

/// git's options before the subcommand: where it runs (`-C`), configuration for one command
/// (`-c`), and those that change nothing. Returns where the subcommand is and the state it runs
/// in; `None` when an option is refused (and denied).
fn global_options(checker: &mut Checker, args: &[Arg], state: &State) -> Option<(usize, State)> {
    let root = checker.root();
    let mut local = state.clone();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.exact() else {
            checker.deny(format!(
                "git's subcommand or option `{}` is not known before it runs; write it out, inside the worktree {root}",
                arg.shown
            ));
            return None;
        };
        match text {
            "-C" => {
                let dir = args.get(i + 1).and_then(Arg::exact);
                match dir.map(|dir| super::directories::change(checker, dir, &local, true)) {
                    Some(Ok(cwd)) => local.cwd = cwd,
                    _ => {
                        checker.deny(format!(
                            "git -C points git outside the worktree {root}; run git inside it (`cd {root} && git …`)"
                        ));
                        return None;
                    }
                }
                i += 2;
            }
            "-c" => {
                if let Err(reason) = config_key(args.get(i + 1)) {
                    checker.deny(reason);
                    return None;
                }
                i += 2;
            }
            _ if HARMLESS_GLOBALS.split_whitespace().any(|h| h == text)
                || text.starts_with("--list-cmds=") =>
            {
                i += 1
            }
            _ if text.starts_with("--attr-source=") => i += 1,
            _ if text.starts_with('-') => {
                let option = text.split('=').next().unwrap_or(text);
                checker.deny(format!(
                    "git {option} points git at another repository, configuration or program than the worktree \
                     {root}'s; run git inside the worktree without it"
                ));
                return None;
            }
            _ => break,
        }
    }
    Some((i, local))
}

/// `git -c key=value`: only keys that change how git shows things or who commits.
fn config_key(setting: Option<&Arg>) -> Result<(), String> {
    let setting = setting.and_then(Arg::exact).unwrap_or("");
    let key = setting.split('=').next().unwrap_or("").to_ascii_lowercase();
    if SAFE_CONFIG_PREFIXES.iter().any(|safe| key.starts_with(safe)) && key.matches('.').count() == 1 {
        return Ok(());
    }
    Err(format!(
        "git -c {key} is refused: configuration can run commands or point git elsewhere (only display and \
         identity keys such as color.*, user.name, log.* are allowed); use `git --no-pager …` for a pager"
    ))
}
