//! Commands other than git and its tools: prefixes that run another command (`env`, `sudo`,
//! `timeout`, `xargs`, …), shells given a script, and commands that write files.

use std::path::PathBuf;

use super::bash::{Arg, Checker, State};

/// Where the real command starts after its prefixes, and what the prefixes change.
pub struct Prefixes {
    pub start: usize,
    /// A directory the command runs in (`env -C`, `sudo -D`).
    pub cwd: Option<PathBuf>,
    /// `xargs` adds arguments read from stdin, which wt cannot see.
    pub from_stdin: bool,
}

/// Options of each prefix that take a value (so the next word is not the command).
fn prefix_options(prefix: &str) -> Option<&'static [&'static str]> {
    Some(match prefix {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        "command" | "builtin" | "nohup" | "time" | "chronic" | "unbuffer" => &[],
        "exec" => &["-a"],
        "sudo" | "doas" => &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "-t"],
        "stdbuf" => &["-i", "-o", "-e"],
        "xargs" => {
            &["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args"]
        }
        _ => return None,
    })
}

pub fn strip_prefixes(checker: &mut Checker, args: &[Arg], state: &State) -> Option<Prefixes> {
    let mut prefixes = Prefixes { start: 0, cwd: None, from_stdin: false };
    loop {
        let name = args.get(prefixes.start)?.value.as_deref().map(|p| p.rsplit('/').next().unwrap_or(p));
        let Some(options) = name.and_then(prefix_options) else { return Some(prefixes) };
        let name = name.unwrap_or_default().to_owned();
        prefixes.from_stdin |= name == "xargs";
        let mut i = prefixes.start + 1;
        while let Some(arg) = args.get(i) {
            let text = arg.text();
            if text == "--" {
                i += 1;
                break;
            }
            let is_assignment = name == "env" && text.contains('=') && !text.starts_with('-');
            if is_assignment {
                let key = text.split('=').next().unwrap_or_default();
                if matches!(key, "GIT_DIR" | "GIT_WORK_TREE" | "GIT_COMMON_DIR" | "GIT_INDEX_FILE") {
                    checker.deny(format!(
                        "{key}= points git at another repository than the worktree {}; run git inside the \
                         worktree without it",
                        checker.root()
                    ));
                }
                i += 1;
                continue;
            }
            if !text.starts_with('-') || text == "-" {
                break;
            }
            let takes_value = options.contains(&text);
            if matches!((name.as_str(), text), ("env", "-C" | "--chdir") | ("sudo", "-D")) {
                prefixes.cwd = Some(directory(checker, args.get(i + 1), state)?);
            }
            if matches!((name.as_str(), text), ("env", "-S" | "--split-string")) {
                let rest: Vec<&str> =
                    args[i + 1..].iter().map(|a| a.value.as_deref().unwrap_or("$UNKNOWN")).collect();
                checker.nested(&rest.join(" "), &mut state.clone(), true);
                return None;
            }
            i += if takes_value { 2 } else { 1 };
        }
        if name == "timeout" {
            i += 1; // the duration
        }
        prefixes.start = i;
    }
}

fn directory(checker: &mut Checker, arg: Option<&Arg>, state: &State) -> Option<PathBuf> {
    let root = checker.root();
    match arg.and_then(|a| a.value.as_deref()).map(|p| checker.wt.directory(p, &state.cwd)) {
        Some(Ok(dir)) => Some(dir),
        _ => {
            checker.deny(format!("the command would run outside the worktree {root}; run it inside it"));
            None
        }
    }
}

/// `bash -c '…'` (and `sh`, `zsh`, …), or a shell reading a heredoc: the script is checked too.
pub fn shell(checker: &mut Checker, args: &[Arg], state: &mut State, stdin_script: Option<&str>) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text.starts_with('-') && !text.starts_with("--") && text.contains('c') {
            match args.get(i + 1).map(|a| a.value.as_deref()) {
                Some(Some(script)) => checker.nested(script, state, true),
                _ => checker.deny(format!(
                    "the script given to {} -c is not known before it runs; run its commands directly inside \
                     the worktree {}",
                    "the shell",
                    checker.root()
                )),
            }
            return;
        }
        if !text.starts_with('-') {
            // A script file: its content is the user's project, not something wt can check here.
            return;
        }
        i += 1;
    }
    if let Some(script) = stdin_script {
        checker.nested(script, state, true);
    }
}

/// Commands that write files, and which of their arguments they write.
pub fn check(checker: &mut Checker, name: &str, args: &[Arg], state: &State, from_stdin: bool) {
    let operands = |value_options: &[&str]| operands(args, value_options);
    let targets: Vec<Arg> = match name {
        "rm" | "rmdir" | "unlink" | "shred" | "tee" | "mv" => operands(&["-S", "--suffix", "-t"]),
        "touch" => operands(&["-d", "-t", "-r", "--date", "--reference"]),
        "mkdir" => operands(&["-m", "--mode"]),
        "truncate" => operands(&["-s", "-r", "--size", "--reference"]),
        "chmod" | "chown" | "chgrp" => {
            let mut all = operands(&[]);
            if !args.iter().any(|a| a.text().starts_with("--reference")) && !all.is_empty() {
                all.remove(0);
            }
            all
        }
        "cp" | "ln" | "install" | "rsync" | "scp" => last_or_target_dir(args),
        "sed" => in_place_files(args, &["-e", "-f", "--expression", "--file", "-l"], true),
        "perl" => in_place_files(args, &["-e", "-E", "-M", "-I"], false),
        "dd" => args.iter().filter(|a| a.text().starts_with("of=")).map(|a| strip(a, "of=")).collect(),
        "curl" => option_values(
            args,
            &["-o", "--output", "--output-dir", "-c", "--cookie-jar", "-D", "--dump-header"],
        ),
        "wget" => option_values(
            args,
            &["-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file"],
        ),
        "tar" => tar_targets(args),
        "unzip" => option_values(args, &["-d"]),
        "find" => find_targets(args),
        _ => Vec::new(),
    };
    if from_stdin && (!targets.is_empty() || is_writer(name)) {
        checker.deny(format!(
            "xargs gives `{name}` paths wt cannot see; list the paths, or use `find <dir inside the worktree> … \
             -delete`, inside the worktree {}",
            checker.root()
        ));
    }
    for target in targets {
        checker.write_target(name, &target, state);
    }
    if name == "find" {
        for command in exec_commands(args) {
            checker.run(&command, &mut state.clone(), None);
        }
    }
}

/// The commands `find -exec … ;` runs, with `{}` standing for a found path (inside the starting
/// paths, which are checked as write targets).
fn exec_commands(args: &[Arg]) -> Vec<Vec<Arg>> {
    let mut commands = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if !matches!(arg.text(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let mut command = Vec::new();
        while let Some(word) = args.get(i) {
            i += 1;
            if word.is(";") || word.is("+") {
                break;
            }
            let value = word.value.as_deref().map(|v| v.replace("{}", "."));
            command.push(Arg { value, shown: word.shown.clone() });
        }
        commands.push(command);
    }
    commands
}

fn is_writer(name: &str) -> bool {
    matches!(
        name,
        "rm" | "rmdir"
            | "unlink"
            | "shred"
            | "tee"
            | "mv"
            | "touch"
            | "mkdir"
            | "truncate"
            | "chmod"
            | "chown"
            | "chgrp"
            | "cp"
            | "ln"
            | "install"
            | "sed"
    )
}

/// Arguments that are not options (everything after `--`), skipping the values of `value_options`.
fn operands(args: &[Arg], value_options: &[&str]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if !options_done && text == "--" {
            options_done = true;
        } else if !options_done && text.starts_with('-') && text != "-" && arg.value.is_some() {
            if value_options.contains(&text) {
                i += 1;
            }
        } else {
            out.push(arg.clone());
        }
        i += 1;
    }
    out
}

/// `cp a b dest`, `cp -t dest a b`: the destination.
fn last_or_target_dir(args: &[Arg]) -> Vec<Arg> {
    let explicit = option_values(args, &["-t", "--target-directory"]);
    if !explicit.is_empty() {
        return explicit;
    }
    let all =
        operands(args, &["-S", "--suffix", "-m", "--mode", "-o", "-g", "-e", "--exclude", "--include", "-f"]);
    if all.len() >= 2 { all.last().cloned().into_iter().collect() } else { Vec::new() }
}

/// The values of options that name a file written (`-o file`, `--output=file`).
fn option_values(args: &[Arg], names: &[&str]) -> Vec<Arg> {
    let mut out = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let text = arg.text();
        if names.contains(&text) {
            out.extend(args.get(i + 1).cloned());
        } else if let Some(name) =
            names.iter().find(|n| n.starts_with("--") && text.starts_with(&format!("{n}=")))
        {
            out.push(strip(arg, &format!("{name}=")));
        }
    }
    out
}

fn strip(arg: &Arg, prefix: &str) -> Arg {
    Arg {
        value: arg.value.as_deref().and_then(|v| v.strip_prefix(prefix)).map(str::to_owned),
        shown: arg.shown.trim_start_matches(prefix).to_owned(),
    }
}

/// `sed -i … files`, `perl -pi -e … files`: the files, when editing in place.
fn in_place_files(args: &[Arg], script_options: &[&str], script_first: bool) -> Vec<Arg> {
    let in_place = args.iter().any(|a| {
        let t = a.text();
        t == "--in-place"
            || t.starts_with("--in-place=")
            || (t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
    });
    if !in_place {
        return Vec::new();
    }
    let has_script_option = args.iter().any(|a| script_options.contains(&a.text()));
    let mut files = operands(args, script_options);
    if script_first && !has_script_option && !files.is_empty() {
        files.remove(0);
    }
    files
}

/// `tar -cf archive …` writes the archive; `tar -xf … -C dir` writes into dir.
fn tar_targets(args: &[Arg]) -> Vec<Arg> {
    let mut targets = option_values(args, &["-C", "--directory"]);
    let bundle = args.first().map(|a| a.text().trim_start_matches('-').to_owned()).unwrap_or_default();
    let creates = bundle.contains('c')
        || bundle.contains('r')
        || bundle.contains('u')
        || args.iter().any(|a| matches!(a.text(), "--create" | "--append" | "--update"));
    if creates {
        targets.extend(option_values(args, &["-f", "--file"]));
        if bundle.contains('f') && !args.first().is_some_and(|a| a.text().starts_with("--")) {
            targets.extend(args.get(1).cloned());
        }
    }
    targets
}

/// `find paths… -delete` or `-exec …`: the starting paths are where it writes.
fn find_targets(args: &[Arg]) -> Vec<Arg> {
    let writes = args.iter().any(|a| matches!(a.text(), "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir"));
    if !writes {
        return Vec::new();
    }
    let mut starts: Vec<Arg> = args
        .iter()
        .take_while(|a| !a.text().starts_with('-') && !a.text().starts_with('('))
        .cloned()
        .collect();
    if starts.is_empty() {
        starts.push(Arg { value: Some(".".into()), shown: ".".into() });
    }
    starts
}
