//! Commands that read, print or make something small, and write a file an operand or option
//! names, or run a program an option names: `uniq IN OUT`, `xxd IN OUT`, `tree -o FILE`, `less -o
//! FILE`, `file -C`, `iconv -o FILE`, `openssl … -out FILE`, `ssh-keygen -f FILE`, `rg --pre
//! PROGRAM`, `ag --pager PROGRAM`. What they write is checked like any write; the programs they
//! run are not followed. The rest of `commands::READ_ONLY` has no
//! such option (`diff`, `cmp`, `od`, `nl`, `column`, `jq`, `md5sum -c` … only read; `sort -o` is
//! a writer's).

use super::arg::Arg;
use super::checker::Checker;
use super::options::{self, Spec};
use super::state::State;

const UNIQ: Spec = Spec::new(
    "cdDiuz",
    "fsw",
    "count repeated all-repeated ignore-case unique zero-terminated group",
    "skip-fields skip-chars check-chars",
);
const TREE: Spec = Spec::new(
    "adlfxACDFghinNpqrstuvQSRJXU",
    "LPIHTo",
    "noreport inodes device dirsfirst filesfirst du si prune matchdirs ignore-case gitignore info metafirst \
     nolinks hyperlink version help fromfile fromtabfile condense",
    "charset filelimit timefmt sort output hintro houtro gitfile infofile",
);
const ICONV: Spec = Spec::new("cls", "fto", "list silent verbose", "from-code to-code output");

/// Whether `name` is one of these commands.
pub fn handles(name: &str) -> bool {
    matches!(
        name,
        "uniq" | "xxd" | "tree" | "less" | "file" | "iconv" | "rg" | "ag" | "openssl" | "ssh-keygen"
    )
}

pub fn check(checker: &mut Checker, name: &str, args: &[Arg], state: &State) {
    match name {
        "uniq" => {
            let parsed = options::parse(args, &UNIQ, false);
            let output: Vec<Arg> =
                parsed.operands.get(1).filter(|a| !a.is("-")).cloned().into_iter().collect();
            checker.write_all(name, &parsed, &output, state);
        }
        "xxd" => xxd(checker, args, state),
        "openssl" => openssl(checker, args, state),
        "ssh-keygen" => ssh_keygen(checker, args, state),
        "tree" => tree(checker, args, state),
        "less" => less(checker, args, state),
        // `file -C` compiles the magic files into `<name>.mgc` in the working directory.
        "file" if args.iter().any(|a| a.is("--compile") || (is_bundle(a) && a.text().contains('C'))) => {
            checker.write_target("file -C", &Arg::literal("."), state);
        }
        "iconv" => {
            let parsed = options::parse(args, &ICONV, false);
            let output = parsed.values(&["-o", "--output"]);
            checker.write_all(name, &parsed, &output, state);
        }
        "rg" if args.iter().any(|a| a.is("--pre") || a.text().starts_with("--pre=")) => {
            checker.unclear(
                "`rg --pre` runs a program on every file it searches, which wt does not follow; search \
                 without it"
                    .into(),
            );
        }
        "ag" if args.iter().any(|a| a.is("--pager") || a.text().starts_with("--pager=")) => {
            checker.unclear("`ag --pager` runs a program wt does not follow".into());
        }
        _ => {}
    }
}

/// A bundle of short options (`-Cm`, not `--long` or `-`).
fn is_bundle(arg: &Arg) -> bool {
    let text = arg.text();
    text.len() > 1 && text.starts_with('-') && !text.starts_with("--")
}

/// `xxd [options] [infile [outfile]]`: options are words (`-c 8`, `-c8`, `-cols 8`, `-ps`);
/// those that take a value take the rest of the word or the next one.
fn xxd(checker: &mut Checker, args: &[Arg], state: &State) {
    const VALUES: &[(&str, &str)] = &[
        ("c", "cols"),
        ("g", "groupsize"),
        ("l", "len"),
        ("o", "offset"),
        ("s", "seek"),
        ("n", "name"),
        ("R", ""),
    ];
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.value.as_deref() else {
            checker.unclear(format!(
                "`xxd` gets `{}`, which wt cannot know before it runs (it may name the file xxd writes)",
                arg.shown
            ));
            return;
        };
        i += 1;
        if text == "-" || !text.starts_with('-') {
            operands.push(arg.clone());
            continue;
        }
        let word = text.trim_start_matches('-');
        let takes_value = VALUES.iter().find(|(short, long)| {
            word.starts_with(short) && (word.len() == 1 || (!long.is_empty() && long.starts_with(word)))
        });
        if takes_value.is_some() {
            i += 1;
        }
    }
    if let Some(output) = operands.get(1).filter(|a| !a.is("-")) {
        checker.write_target("xxd", output, state);
    }
}

/// `tree -o FILE` writes its listing there; `tree -R` writes `00Tree.html` into every folder it
/// lists (`-l` follows symlinks, out of the worktree too).
fn tree(checker: &mut Checker, args: &[Arg], state: &State) {
    let parsed = options::parse(args, &TREE, false);
    let mut outputs = parsed.values(&["-o", "--output"]);
    if parsed.has(&["-R"]) {
        if parsed.has(&["-l"]) {
            checker.unclear("`tree -R -l` writes into every folder it reaches through symlinks".into());
        }
        if parsed.operands.is_empty() {
            outputs.push(Arg::literal("."));
        }
        outputs.extend(parsed.operands.iter().cloned());
    }
    checker.write_all("tree", &parsed, &outputs, state);
}

/// `less -o FILE`, `-O FILE`, `--log-file=FILE`, `--LOG-FILE=FILE` copy the input there;
/// `+COMMANDS` run less commands at start (`!` runs a shell), and a lesskey file can set
/// `LESSOPEN`.
fn less(checker: &mut Checker, args: &[Arg], state: &State) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let text = arg.text();
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "log-file" | "LOG-FILE" => {
                    let target = match value {
                        Some(value) => Arg { value: Some(value.to_owned()), ..arg.clone() },
                        None => args.get(i).cloned().unwrap_or_else(|| Arg::literal("")),
                    };
                    i += usize::from(value.is_none());
                    checker.write_target("less", &target, state);
                }
                "lesskey-file" | "lesskey-src" | "lesskey-content" => {
                    checker
                        .unclear("`less` reads key bindings from a lesskey file wt does not follow".into());
                }
                _ => {}
            }
        } else if let Some(command) = text.strip_prefix('+') {
            let plain = command.chars().all(|c| c.is_ascii_digit())
                || matches!(command, "G" | "F" | "g")
                || (command.starts_with('/') && !command.contains(['!', '|']));
            if !plain {
                checker.unclear(format!("`less {text}` runs less commands wt does not follow"));
            }
        } else if is_bundle(arg) {
            let bundle = &text[1..];
            match bundle.find(['o', 'O', 'k']) {
                None => {}
                Some(at) if bundle[at..].starts_with('k') => {
                    checker.unclear(
                        "`less -k` reads key bindings from a lesskey file wt does not follow".into(),
                    );
                }
                Some(at) => {
                    let rest = &bundle[at + 1..];
                    let target = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).cloned().unwrap_or_else(|| Arg::literal(""))
                    } else {
                        Arg { value: Some(rest.to_owned()), ..arg.clone() }
                    };
                    checker.write_target("less", &target, state);
                }
            }
        }
    }
}

/// `openssl SUBCOMMAND …`: options named `-…out` (`-out`, `-keyout`, `-reqout`, `-sess_out`),
/// `-outdir`, `-writerand`, `-keylogfile` and `-CAserial` write the next word; `-CAcreateserial`
/// writes a serial file next to the `-CA` certificate; `-engine`, `-provider`,
/// `-provider-path` and `-config` load code or settings wt does not follow.
fn openssl(checker: &mut Checker, args: &[Arg], state: &State) {
    let value = |i: usize| args.get(i + 1).cloned().unwrap_or_else(|| Arg::literal(""));
    let creates_serial = args.iter().any(|a| a.is("-CAcreateserial"));
    for (i, arg) in args.iter().enumerate() {
        let text = arg.text();
        let writes = text.starts_with('-')
            && (text.ends_with("out")
                || matches!(text, "-outdir" | "-writerand" | "-keylogfile" | "-CAserial")
                || (creates_serial && text == "-CA"));
        if writes {
            checker.write_target("openssl", &value(i), state);
        } else if matches!(text, "-engine" | "-provider" | "-provider-path" | "-config") {
            checker.unclear(format!("`openssl {text}` loads code or settings wt does not follow"));
        }
    }
}

/// `ssh-keygen`: reading modes (`-l`, `-y`, `-B`, `-F`, `-Q`, `-D`, `-e`, `-i`, `-L`, `-Y
/// verify`) write nothing; signing writes next to each file signed (`-s`, `-Y sign`); anything
/// else (making a key, `-p`, `-c`, `-R`, `-H`, `-k`, `-A`) writes the `-f` file, by default in
/// `~/.ssh`.
fn ssh_keygen(checker: &mut Checker, args: &[Arg], state: &State) {
    const SPEC: Spec = Spec::new("ABceHhikLlpqUuvyQ", "abCDEFfGIJjKMmNnOPRrstVwYZz", "", "");
    let parsed = options::parse(args, &SPEC, false);
    let reading_op = parsed.values(&["-Y"]).iter().any(|op| {
        matches!(op.text(), "verify" | "check-novalidate" | "find-principals" | "match-principals")
    });
    if reading_op || parsed.has(&["-l", "-y", "-B", "-F", "-Q", "-D", "-e", "-i", "-L"]) {
        return;
    }
    let signs = parsed.has(&["-s"]) || parsed.values(&["-Y"]).iter().any(|op| op.is("sign"));
    let mut targets = if signs { parsed.operands.clone() } else { Vec::new() };
    let file = parsed.values(&["-f"]);
    if !signs || parsed.has(&["-A"]) {
        match file.first() {
            Some(file) => targets.push(file.clone()),
            None => targets.push(Arg {
                value: checker.variable("HOME", state).map(|home| format!("{home}/.ssh")),
                shown: "~/.ssh".into(),
                glob: false,
            }),
        }
    }
    checker.write_all("ssh-keygen", &parsed, &targets, state);
}
