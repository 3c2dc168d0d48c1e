//! git, git-spice and gh: what an agent may do in its worktree. The engine owns branches, the
//! stack and everything remote; the repository's shared state (config, stash, refs of other
//! branches) is off limits because other worktrees share it.

use super::bash::{Arg, Checker, State};

/// git's global options that take a value.
const GIT_GLOBAL_VALUE_OPTIONS: &[&str] = &["-c", "--namespace", "--exec-path", "--config-env"];

pub fn git(checker: &mut Checker, args: &[Arg], state: &State) {
    let root = checker.root();
    let mut i = 0;
    let mut local = state.clone();
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "-C" {
            match args
                .get(i + 1)
                .and_then(|a| a.value.as_deref())
                .map(|p| checker.wt.directory(p, &local.cwd))
            {
                Some(Ok(dir)) => local.cwd = dir,
                _ => return checker.deny(format!(
                    "git -C points git outside the worktree {root}; run git inside it (`cd {root} && git …`)"
                )),
            }
            i += 2;
        } else if text.starts_with("--git-dir") || text.starts_with("--work-tree") {
            return checker.deny(format!(
                "{} points git at another repository than the worktree {root}; run git inside it without it",
                text.split('=').next().unwrap_or(text)
            ));
        } else if GIT_GLOBAL_VALUE_OPTIONS.contains(&text) {
            i += 2;
        } else if text.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let Some(sub) = args.get(i) else { return };
    let rest = &args[i + 1..];
    if let Some(reason) = git_subcommand(checker, sub.text(), rest, &local) {
        checker.deny(reason);
    }
}

fn has(args: &[Arg], flags: &[&str]) -> bool {
    args.iter().any(|a| {
        flags.iter().any(|f| a.is(f) || (f.starts_with("--") && a.text().starts_with(&format!("{f}="))))
    })
}

fn positionals(args: &[Arg]) -> Vec<&Arg> {
    args.iter().take_while(|a| !a.is("--")).filter(|a| !a.text().starts_with('-')).collect()
}

fn git_subcommand(checker: &mut Checker, sub: &str, args: &[Arg], state: &State) -> Option<String> {
    let root = checker.root();
    let own = checker.branch.map(str::to_owned);
    let engine_owns = |what: &str| {
        format!(
            "{what} is not for a task's agent: the engine owns branches and the stack; commit your work on \
                 this worktree's branch in {root} and wt stacks it"
        )
    };
    match sub {
        "push" => Some(format!(
            "git push is not allowed from the worktree {root}: the engine pushes the whole stack at the end of \
             the run (`wt submit`)"
        )),
        "fetch" | "pull" => Some(format!(
            "git {sub} is not allowed from the worktree {root}: the engine keeps the stack up to date; work with \
             what is checked out"
        )),
        "rebase" => Some(engine_owns("git rebase")),
        "update-ref" | "filter-branch" | "replace" => Some(engine_owns(&format!("git {sub}"))),
        "switch" => {
            let target = positionals(args).first().map(|a| a.text().to_owned());
            let changing =
                has(args, &["-c", "-C", "--create", "--force-create", "--orphan", "--detach", "-d"]);
            (changing || target != own).then(|| engine_owns("switching branches"))
        }
        "checkout" => {
            checkout(args, state, own.as_deref()).then(|| engine_owns("checking out another branch"))
        }
        "reset" => reset(args, state).then(|| engine_owns("resetting to another commit")),
        "branch" => branch(args).then(|| engine_owns("creating, moving or deleting branches")),
        "worktree" => {
            let read_only = positionals(args).first().is_none_or(|a| a.is("list"));
            (!read_only).then(|| engine_owns("adding or removing worktrees"))
        }
        "tag" => {
            let listing =
                positionals(args).is_empty() || has(args, &["-l", "--list", "--contains", "--points-at"]);
            (!listing || has(args, &["-d", "--delete", "-f", "--force"])).then(|| {
                format!("tags are shared by every worktree of the repository; leave tagging to after the run ({root})")
            })
        }
        "stash" => {
            let read_only = positionals(args).first().is_some_and(|a| a.is("list") || a.is("show"));
            (!read_only).then(|| {
                format!(
                    "the stash is shared by every worktree of the repository; commit your work on this \
                         worktree's branch in {root} instead"
                )
            })
        }
        "config" => config(args).then(|| {
            format!(
                "git config changes settings every worktree shares; pass `-c key=value` to one command \
                     inside {root} instead"
            )
        }),
        "remote" => {
            let read_only = positionals(args).first().is_none_or(|a| a.is("get-url"));
            (!read_only)
                .then(|| format!("remotes belong to the engine; wt submits the stack at the end ({root})"))
        }
        "symbolic-ref" if positionals(args).len() >= 2 => Some(engine_owns("git symbolic-ref")),
        "reflog" if positionals(args).first().is_some_and(|a| a.is("expire") || a.is("delete")) => {
            Some(engine_owns("rewriting the reflog"))
        }
        "clone" | "init" => {
            let targets = positionals(args);
            let target = if sub == "clone" { targets.get(1) } else { targets.first() };
            if let Some(target) = target {
                checker.write_target(&format!("git {sub}"), target, state);
            }
            None
        }
        "archive" | "format-patch" | "bundle" => {
            for (i, arg) in args.iter().enumerate() {
                if arg.is("-o") || arg.is("--output") || arg.is("--output-directory") {
                    if let Some(target) = args.get(i + 1) {
                        checker.write_target(&format!("git {sub}"), target, state);
                    }
                } else if let Some(value) = arg.text().strip_prefix("--output=") {
                    let target = Arg { value: Some(value.to_owned()), shown: value.to_owned() };
                    checker.write_target(&format!("git {sub}"), &target, state);
                }
            }
            None
        }
        _ => None,
    }
}

/// `git checkout` of another branch (or a new one) rather than of paths.
fn checkout(args: &[Arg], state: &State, own: Option<&str>) -> bool {
    if has(args, &["-b", "-B", "--orphan", "--detach", "-f", "--force"]) {
        return true;
    }
    if args.iter().any(|a| a.is("--")) {
        return false;
    }
    match positionals(args).first() {
        None => false,
        Some(target) if Some(target.text()) == own => false,
        // A path that exists is a file restore; anything else names a branch or commit.
        Some(target) => !exists(target, state),
    }
}

/// `git reset` to anything but HEAD (or a commit of HEAD's own history, `HEAD~2`).
fn reset(args: &[Arg], state: &State) -> bool {
    if args.iter().any(|a| a.is("--")) && positionals(args).is_empty() {
        return false;
    }
    match positionals(args).first() {
        None => false,
        Some(target) if exists(target, state) => false,
        Some(target) => {
            let text = target.text();
            let base = text.split(['~', '^']).next().unwrap_or(text);
            !matches!(base, "HEAD" | "@")
        }
    }
}

fn branch(args: &[Arg]) -> bool {
    let changing = [
        "-d",
        "-D",
        "--delete",
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-f",
        "--force",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-t",
        "--track",
    ];
    if has(args, &changing) {
        return true;
    }
    let listing = has(args, &["-l", "--list"]);
    let value_options =
        ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"];
    let mut creates = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if value_options.contains(&arg.text()) {
            i += 2;
            continue;
        }
        creates |= !arg.text().starts_with('-') && !listing;
        i += 1;
    }
    creates
}

/// Whether `git config …` writes (anything but reading a value or listing).
fn config(args: &[Arg]) -> bool {
    let reading = ["--get", "--get-all", "--get-regexp", "-l", "--list", "--get-urlmatch", "--show-origin"];
    if has(args, &reading) {
        return false;
    }
    let subcommand = positionals(args).first().map(|a| a.text().to_owned());
    match subcommand.as_deref() {
        Some("get" | "list") => false,
        Some(_) => {
            positionals(args).len() >= 2 || has(args, &["--unset", "--unset-all", "--add", "--replace-all"])
        }
        None => false,
    }
}

fn exists(arg: &Arg, state: &State) -> bool {
    arg.value.as_deref().is_some_and(|p| state.cwd.join(p).exists())
}

/// git-spice (`gs` or `git-spice`): reading the stack is fine, changing it is the engine's.
/// Ghostscript is also called `gs`: its output files are write targets.
pub fn spice(checker: &mut Checker, args: &[Arg], state: &State) {
    let ghostscript =
        args.iter().any(|a| a.text().starts_with("-sDEVICE") || a.text().starts_with("-dNOPAUSE"));
    if ghostscript {
        for (i, arg) in args.iter().enumerate() {
            if arg.is("-o") {
                if let Some(target) = args.get(i + 1) {
                    checker.write_target("gs", target, state);
                }
            } else if let Some(file) = arg.text().strip_prefix("-sOutputFile=") {
                let target = Arg { value: Some(file.to_owned()), shown: file.to_owned() };
                checker.write_target("gs", &target, state);
            }
        }
        return;
    }
    let command = positionals(args).first().map(|a| a.text().to_owned());
    let read_only = match command.as_deref() {
        None => true,
        Some(c) => matches!(c, "log" | "l" | "ls" | "ll" | "version" | "help"),
    };
    if !read_only {
        checker.deny(format!(
            "git-spice {} changes the stack, which the engine owns; commit on this worktree's branch in {} and wt \
             stacks and submits it",
            command.unwrap_or_default(),
            checker.root()
        ));
    }
}

/// gh: reading is fine; anything that writes to the forge is the engine's (`wt submit`).
pub fn gh(checker: &mut Checker, args: &[Arg]) {
    let words: Vec<&str> = positionals(args).iter().map(|a| a.text()).collect();
    let allowed = match words.as_slice() {
        [] | ["status" | "search" | "browse" | "version" | "help", ..] => true,
        ["auth", "status", ..] => true,
        ["api", ..] => {
            let method =
                args.iter().position(|a| a.is("-X") || a.is("--method")).and_then(|i| args.get(i + 1));
            let get = method.is_none_or(|m| m.text().eq_ignore_ascii_case("GET"));
            get && !has(args, &["-f", "-F", "--field", "--raw-field", "--input"])
        }
        [_, verb, ..] => matches!(*verb, "view" | "list" | "status" | "diff" | "checks" | "search"),
        [_] => false,
    };
    if !allowed {
        checker.deny(format!(
            "gh {} writes to the forge; the engine submits the stack at the end of the run (`wt submit`), so \
             leave that out of the work in {}",
            words.iter().take(2).copied().collect::<Vec<_>>().join(" "),
            checker.root()
        ));
    }
}
