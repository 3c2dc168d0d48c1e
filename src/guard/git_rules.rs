//! The git subcommands a task's agent may run, and their rules. A subcommand not listed here is
//! refused: the list holds what reads, and what changes this worktree's files and its own
//! branch; remotes, the stash, tags, configuration and other branches belong to the engine or
//! are shared by every worktree.

use std::path::Path;

use super::arg::Arg;
use super::checker::Checker;
use super::options::{has, positionals};
use super::state::State;

/// Subcommands that only read (their output options are checked).
const READING: &[&str] = &[
    "status",
    "log",
    "show",
    "diff",
    "blame",
    "annotate",
    "shortlog",
    "describe",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "cat-file",
    "show-ref",
    "name-rev",
    "merge-base",
    "diff-tree",
    "diff-files",
    "diff-index",
    "range-diff",
    "whatchanged",
    "cherry",
    "show-branch",
    "count-objects",
    "check-ignore",
    "check-attr",
    "check-ref-format",
    "var",
    "version",
    "help",
    "grep",
    "verify-commit",
    "verify-tag",
    "fsck",
    "for-each-ref",
    "stripspace",
    "format-patch",
    "archive",
    "bundle",
];

/// Subcommands that change this worktree's files, index or own branch.
const WORKING: &[&str] =
    &["add", "commit", "restore", "rm", "mv", "clean", "apply", "am", "cherry-pick", "revert"];

/// Subcommands whose options include git's diff options, among them `--output=<file>`.
const DIFF_OPTIONS: &[&str] = &[
    "log",
    "show",
    "diff",
    "diff-tree",
    "diff-files",
    "diff-index",
    "range-diff",
    "whatchanged",
    "format-patch",
];

/// Subcommands that only read, wherever they run.
pub fn only_reads(sub: &str) -> bool {
    READING.contains(&sub) && !matches!(sub, "format-patch" | "archive" | "bundle")
}

/// Checks one subcommand; false when it is refused (and denied).
pub fn subcommand(checker: &mut Checker, sub: &str, args: &[Arg], state: &State) -> bool {
    match rule(checker, sub, args, state) {
        Ok(()) => true,
        Err(reason) => {
            let root = checker.root();
            checker.deny(format!("{reason} (worktree {root})"));
            false
        }
    }
}

fn engine_owns(what: &str) -> String {
    format!(
        "{what} is not for a task's agent: the engine owns branches and the stack; commit your work on this \
         worktree's branch and wt stacks it"
    )
}

fn rule(checker: &mut Checker, sub: &str, args: &[Arg], state: &State) -> Result<(), String> {
    if READING.contains(&sub) || WORKING.contains(&sub) {
        return reading_and_working(checker, sub, args, state);
    }
    if let Some(result) = remotes_and_branches(checker, sub, args, state) {
        return result;
    }
    if let Some(result) = shared_state(checker, sub, args, state) {
        return result;
    }
    match sub {
        "init" | "clone" => new_repository(checker, sub, args, state),
        "checkout-index" => {
            for prefix in option_values(args, "--prefix") {
                checker.write_target("git checkout-index --prefix", &prefix, state);
            }
            Ok(())
        }
        _ => Err(format!(
            "git {sub} is not among the git subcommands a task's agent runs (status, diff, log, show, add, commit, \
             restore, rm, mv, grep, blame, …); ask for it in your report instead"
        )),
    }
}

/// Remotes and branches: the engine's.
fn remotes_and_branches(
    checker: &Checker,
    sub: &str,
    args: &[Arg],
    state: &State,
) -> Option<Result<(), String>> {
    let own = checker.branch;
    Some(match sub {
        "push" => Err(
            "git push is not allowed: the engine pushes the whole stack at the end of the run (`wt submit`)"
                .into(),
        ),
        "fetch" | "pull" | "ls-remote" => Err(format!(
            "git {sub} is not allowed: the engine keeps the stack up to date; work with what is checked out"
        )),
        "merge" | "rebase" if has(args, &["--abort", "--quit", "--continue", "--skip"]) => Ok(()),
        "merge" | "rebase" => Err(engine_owns(&format!("git {sub}"))),
        "checkout" => checkout(args, state, own),
        "switch" => switch(args, own),
        "reset" => reset(args, state),
        "branch" => branch(args),
        "symbolic-ref" if positionals(args).len() >= 2 || has(args, &["-d", "--delete"]) => {
            Err(engine_owns("git symbolic-ref"))
        }
        "symbolic-ref" => Ok(()),
        "worktree" => allow_only(args, sub, &["list"], true, &engine_owns("adding or removing worktrees")),
        "remote" => match positionals(args).first().map(|a| a.text()) {
            None | Some("get-url") if args.iter().all(|a| a.value.is_some()) => Ok(()),
            _ => Err("remotes belong to the engine; wt submits the stack at the end".into()),
        },
        _ => return None,
    })
}

/// What every worktree of the repository shares: the stash, notes, the reflog, tags,
/// configuration. Reading is fine.
fn shared_state(checker: &mut Checker, sub: &str, args: &[Arg], state: &State) -> Option<Result<(), String>> {
    let shared = |what: &str| format!("{what} shared by every worktree of the repository");
    Some(match sub {
        "stash" if positionals(args).first().is_some_and(|a| a.is("show")) => {
            reading_and_working(checker, "show", &args[1..], state)
        }
        "stash" => allow_only(
            args,
            sub,
            &["list"],
            false,
            &format!("{}; commit your work on this worktree's branch instead", shared("the stash is")),
        ),
        "notes" => allow_only(
            args,
            sub,
            &["list", "show", "get-ref"],
            true,
            &format!("{}; put the note in a commit message instead", shared("notes are refs")),
        ),
        "reflog" => {
            allow_only(args, sub, &["show", "exists", "list"], true, &engine_owns("rewriting the reflog"))
        }
        "sparse-checkout" => allow_only(
            args,
            sub,
            &["list"],
            false,
            "sparse-checkout changes this worktree's configuration; leave it to the engine",
        ),
        "tag" => tag(args),
        "config" => config(args),
        _ => return None,
    })
}

/// Reading and working subcommands: what they write besides the worktree (`--output`,
/// `format-patch -o`, `archive -o`, `bundle create`), and options that run programs.
fn reading_and_working(checker: &mut Checker, sub: &str, args: &[Arg], state: &State) -> Result<(), String> {
    let name = format!("git {sub}");
    let mut outputs = option_values(args, "--output");
    match sub {
        "format-patch" => outputs
            .extend(option_values(args, "-o").into_iter().chain(option_values(args, "--output-directory"))),
        "archive" => {
            if has(args, &["--remote", "--exec"]) {
                return Err(
                    "git archive --remote/--exec reaches other repositories; the engine owns remotes".into(),
                );
            }
            outputs.extend(option_values(args, "-o"));
        }
        "bundle" => match positionals(args).first().and_then(|a| a.exact()) {
            Some("create") => outputs.extend(positionals(args).get(1).map(|a| (*a).clone())),
            Some("verify" | "list-heads") => {}
            _ => {
                return Err(
                    "git bundle unbundle writes objects every worktree shares; leave it to the engine".into(),
                );
            }
        },
        "grep"
            if has(args, &["-O", "--open-files-in-pager"])
                || args.iter().any(|a| a.text().starts_with("-O")) =>
        {
            return Err(
                "git grep -O runs a program on the results; run `git grep` and open the files yourself"
                    .into(),
            );
        }
        "apply" | "am" if has(args, &["--unsafe-paths"]) => {
            return Err(
                "git apply --unsafe-paths writes outside the repository; apply patches inside the worktree"
                    .into(),
            );
        }
        _ => {}
    }
    for target in outputs {
        checker.write_target(&name, &target, state);
    }
    if DIFF_OPTIONS.contains(&sub) || sub == "grep" {
        unknown_options(checker, &name, args);
    }
    Ok(())
}

/// An argument wt cannot know may be an option such as `--output=/elsewhere`; a known option
/// followed by one (`--author "$WHO"`) or written with it (`--grep=$X`) is only a value.
fn unknown_options(checker: &mut Checker, name: &str, args: &[Arg]) {
    const TAKES_VALUE: &[&str] = &[
        "-n",
        "-m",
        "-S",
        "-G",
        "-L",
        "-e",
        "-f",
        "--grep",
        "--author",
        "--committer",
        "--since",
        "--until",
        "--after",
        "--before",
        "--format",
        "--pretty",
        "--max-count",
        "--skip",
        "-U",
        "--unified",
        "--diff-filter",
    ];
    for (i, arg) in args.iter().enumerate() {
        if arg.value.is_some() || args.iter().take(i).any(|a| a.is("--")) {
            continue;
        }
        let after_value_option = i > 0 && TAKES_VALUE.contains(&args[i - 1].text());
        let written_option =
            arg.shown.starts_with("--") && arg.shown.contains('=') && !arg.shown.starts_with("--output");
        if !after_value_option && !written_option {
            checker.unclear(format!(
                "`{name}` gets `{}`, which wt cannot know and might be an option",
                arg.shown
            ));
        }
    }
}

/// Values of `--name=value`, `--name value` and (for short options) `-ovalue`.
fn option_values(args: &[Arg], name: &str) -> Vec<Arg> {
    let with_equals = format!("{name}=");
    let mut out = Vec::new();
    for (i, arg) in args.iter().enumerate().take_while(|(_, a)| !a.is("--")) {
        if arg.is(name) {
            out.extend(args.get(i + 1).cloned());
        } else if let Some(value) = arg.value.as_deref().and_then(|v| v.strip_prefix(&with_equals)) {
            out.push(Arg { value: Some(value.to_owned()), ..arg.clone() });
        } else if arg.value.is_none() && arg.shown.starts_with(&with_equals) {
            out.push(arg.clone());
        } else if !name.starts_with("--") && arg.text().starts_with(name) && arg.text().len() > name.len() {
            out.push(Arg { value: Some(arg.text()[name.len()..].to_owned()), ..arg.clone() });
        }
    }
    out
}

/// Allowed only as one of the `read` subcommands (or with none, when `bare_reads`).
fn allow_only(args: &[Arg], sub: &str, read: &[&str], bare_reads: bool, refusal: &str) -> Result<(), String> {
    let first = positionals(args).first().map(|a| a.value.clone());
    let fine = match first {
        None => bare_reads && args.iter().all(|a| a.value.is_some()),
        Some(Some(word)) => read.contains(&word.as_str()),
        Some(None) => false,
    };
    if fine { Ok(()) } else { Err(format!("git {sub}: {refusal}")) }
}

/// `git checkout` of paths is fine; of another branch, a new one, `-` or a detached commit is
/// not. `checkout <branch> --` (nothing after `--`) switches; `checkout <tree> -- <paths>`
/// restores files.
fn checkout(args: &[Arg], state: &State, own: Option<&str>) -> Result<(), String> {
    if has(args, &["-b", "-B", "--orphan", "--detach"]) {
        return Err(engine_owns("creating or checking out another branch"));
    }
    let dashes = args.iter().position(|a| a.is("--"));
    let paths_after = dashes.is_some_and(|d| d + 1 < args.len()) || has(args, &["--pathspec-from-file"]);
    let targets = positionals(args);
    match targets.first() {
        _ if paths_after => Ok(()),
        None => Ok(()),
        Some(target) if target.is("-") => Err(engine_owns("checking out the previous branch (`-`)")),
        Some(target) if target.exact().is_some() && target.exact() == own => Ok(()),
        Some(target) if target.exact().is_none() => Err(format!(
            "git checkout {} names a branch or a path wt cannot know before it runs; write it out (`git checkout -- <file>` for files)",
            target.shown
        )),
        // Without `--`, a name that exists as a path is a file restore; anything else names a
        // branch or commit.
        Some(_) if dashes.is_none() && targets.iter().all(|t| exists(t, state)) => Ok(()),
        Some(_) => Err(engine_owns("checking out another branch")),
    }
}

/// `git switch` only to this worktree's own branch.
fn switch(args: &[Arg], own: Option<&str>) -> Result<(), String> {
    if has(args, &["-c", "-C", "--create", "--force-create", "--orphan", "--detach", "-d"]) {
        return Err(engine_owns("creating or switching branches"));
    }
    let targets: Vec<&Arg> =
        args.iter().filter(|a| !a.text().starts_with('-') || a.value.is_none() || a.is("-")).collect();
    match targets.first() {
        None => Ok(()),
        Some(target) if target.exact().is_some() && target.exact() == own => Ok(()),
        Some(_) => Err(engine_owns("switching branches")),
    }
}

/// `git reset` to HEAD or a commit of HEAD's own history (`HEAD~2`), or of paths; not to
/// another branch or commit.
fn reset(args: &[Arg], state: &State) -> Result<(), String> {
    if let Some(d) = args.iter().position(|a| a.is("--"))
        && d + 1 < args.len()
    {
        return Ok(());
    }
    match positionals(args).first() {
        None => Ok(()),
        Some(target) if exists(target, state) => Ok(()),
        Some(target) => {
            let text = target.exact().unwrap_or("?");
            let base = text.split(['~', '^']).next().unwrap_or(text);
            if matches!(base, "HEAD" | "@") {
                Ok(())
            } else {
                Err(engine_owns("resetting to another branch or commit"))
            }
        }
    }
}

/// `git branch` lists; creating, moving, deleting or re-pointing branches is the engine's.
fn branch(args: &[Arg]) -> Result<(), String> {
    const CHANGING: &[&str] = &[
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
    const VALUE_OPTIONS: &[&str] =
        &["--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"];
    if has(args, CHANGING) || args.iter().any(|a| a.value.is_none()) {
        return Err(engine_owns("creating, moving or deleting branches"));
    }
    let listing = has(args, &["-l", "--list", "--show-current", "-a", "--all", "-r", "--remotes"]);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if VALUE_OPTIONS.contains(&arg.text()) {
            i += 2;
            continue;
        }
        if !arg.text().starts_with('-') && !listing {
            return Err(engine_owns("creating branches"));
        }
        i += 1;
    }
    Ok(())
}

fn tag(args: &[Arg]) -> Result<(), String> {
    let listing = positionals(args).is_empty()
        || has(args, &["-l", "--list", "--contains", "--points-at", "-v", "--verify"]);
    if !listing
        || has(args, &["-d", "--delete", "-f", "--force", "-a", "-s", "-m"])
        || args.iter().any(|a| a.value.is_none())
    {
        return Err(
            "tags are shared by every worktree of the repository; leave tagging to after the run".into()
        );
    }
    Ok(())
}

/// `git config` may read; writing changes settings every worktree shares.
fn config(args: &[Arg]) -> Result<(), String> {
    const READING: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "-l",
        "--list",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
    ];
    let refusal = "git config changes settings every worktree shares; pass display settings with `git -c color.ui=never …` to one command instead";
    if args.iter().any(|a| a.value.is_none()) && !has(args, READING) {
        return Err(refusal.into());
    }
    if has(
        args,
        &[
            "--unset",
            "--unset-all",
            "--add",
            "--replace-all",
            "--rename-section",
            "--remove-section",
            "-e",
            "--edit",
        ],
    ) {
        return Err(refusal.into());
    }
    if has(args, READING) {
        return Ok(());
    }
    let words = positionals(args);
    match words.first().and_then(|w| w.exact()) {
        Some("get" | "list") | None => Ok(()),
        Some(_) if words.len() == 1 => Ok(()),
        Some(_) => Err(refusal.into()),
    }
}

/// `git init [dir]`, `git clone url [dir]`: the new repository must be inside the worktree, and
/// `clone -c` is held to the same keys as `git -c`.
fn new_repository(checker: &mut Checker, sub: &str, args: &[Arg], state: &State) -> Result<(), String> {
    if has(args, &["-u", "--upload-pack", "-c", "--config", "--template", "--separate-git-dir"])
        && sub == "clone"
    {
        if has(args, &["-u", "--upload-pack"]) {
            return Err("git clone --upload-pack runs a program; clone without it".into());
        }
        if has(args, &["-c", "--config"]) {
            return Err("git clone -c sets configuration that can run commands; clone without it".into());
        }
    }
    let words = positionals(args);
    let target = if sub == "clone" { words.get(1).copied() } else { words.first().copied() };
    let name = format!("git {sub}");
    match target {
        Some(target) => checker.write_target(&name, target, state),
        None if sub == "clone" => {
            let url = words.first().and_then(|w| w.exact()).unwrap_or("");
            let dir =
                Path::new(url.trim_end_matches('/')).file_stem().map(|s| s.to_string_lossy().into_owned());
            checker.write_target(&name, &Arg { value: dir, shown: url.to_owned(), glob: false }, state);
        }
        None => checker.write_target(&name, &Arg::literal("."), state),
    }
    for dir in option_values(args, "--separate-git-dir") {
        checker.write_target(&name, &dir, state);
    }
    Ok(())
}

/// Whether `arg` names a path that exists from every place the working directory may be.
fn exists(arg: &Arg, state: &State) -> bool {
    let (Some(path), Some(dirs)) = (arg.exact(), state.cwd.dirs()) else { return false };
    dirs.iter().all(|d| super::paths::resolve(Path::new(path), &d.physical, &state.links).exists())
}
