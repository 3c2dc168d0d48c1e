//! Commands that write files, and which of their arguments they write. Each writer's options
//! are read with its spec: an option wt does not know, or an argument it cannot know, means
//! the writes go to a place wt cannot tell ("unclear"); a write outside the worktree is denied.
//! Writers with rules of their own are handed on: `sed`, `find`, and `downloads` (downloaders,
//! archivers, `cargo`).

use std::path::PathBuf;

use super::arg::Arg;
use super::checker::Checker;
use super::options::{self, Parsed, Spec};
use super::state::State;
use super::written::Content;

const RM: Spec = Spec::new(
    "fiIrRdv",
    "",
    "force interactive one-file-system no-preserve-root preserve-root recursive dir verbose",
    "",
);
const RMDIR: Spec = Spec::new("pv", "", "ignore-fail-on-non-empty parents verbose", "");
const SHRED: Spec =
    Spec::new("fuvxz", "ns", "force remove verbose exact zero", "iterations random-source size");
const TOUCH: Spec = Spec::new("acfhm", "dtr", "no-create no-dereference", "date reference time");
const MKDIR: Spec = Spec::new("pvZ", "m", "parents verbose context", "mode");
const TRUNCATE: Spec = Spec::new("co", "rs", "no-create io-blocks", "reference size");
const CHMOD: Spec = Spec::new(
    "cfvR",
    "",
    "changes silent quiet verbose no-preserve-root preserve-root recursive dereference no-dereference",
    "reference",
);
const CHOWN: Spec = Spec::new(
    "cfvRhHLP",
    "",
    "changes silent quiet verbose dereference no-dereference no-preserve-root preserve-root recursive",
    "from reference",
);
const CP: Spec = Spec::new(
    "abdfHilLnPpRrsTuvxZ",
    "St",
    "archive attributes-only backup copy-contents debug force interactive link dereference no-clobber \
     no-dereference preserve parents recursive reflink remove-destination strip-trailing-slashes symbolic-link \
     no-target-directory update verbose keep-directory-symlink one-file-system context",
    "no-preserve sparse suffix target-directory",
);
const MV: Spec = Spec::new(
    "bfinTuvZ",
    "St",
    "backup debug exchange force interactive no-clobber no-copy strip-trailing-slashes no-target-directory update \
     verbose context",
    "suffix target-directory",
);
const LN: Spec = Spec::new(
    "bdfFinLPrsTv",
    "St",
    "backup directory force interactive logical no-dereference physical relative symbolic no-target-directory \
     verbose",
    "suffix target-directory",
);
const INSTALL: Spec = Spec::new(
    "bcCdDpsTvZ",
    "gmoSt",
    "backup compare directory preserve-timestamps strip no-target-directory verbose preserve-context context",
    "group mode owner suffix target-directory",
);
const TEE: Spec = Spec::new("aip", "", "append ignore-interrupts output-error", "");
const MKNOD: Spec = Spec::new("Z", "m", "context", "mode");
const PATCH: Spec = Spec::new(
    "bcefElnNRstuvZT",
    "BdDFgiopPrVxYz",
    "backup context ed forward ignore-whitespace normal remove-empty-files reverse silent quiet batch unified \
     verbose dry-run posix set-utc set-time binary merge force",
    "prefix directory ifdef fuzz get input output strip reject-file version-control basename-prefix suffix \
     quoting-style read-only reject-format",
);
const MAKE: Spec = Spec::new(
    "bBdeiknpqrRsStvwL",
    "CfIjloOW",
    "always-make environment-overrides ignore-errors keep-going just-print dry-run recon print-data-base question \
     no-builtin-rules no-builtin-variables silent quiet no-keep-going stop touch trace version print-directory \
     no-print-directory warn-undefined-variables check-symlink-times debug",
    "directory file makefile include-dir jobs load-average max-load old-file assume-old new-file assume-new \
     what-if output-sync eval jobserver-style",
);
const SORT: Spec = Spec::new(
    "bdfgiMhnRrVcCmsuz",
    "kotST",
    "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort \
     human-numeric-sort numeric-sort random-sort reverse version-sort check merge stable unique zero-terminated \
     debug",
    "sort key output field-separator buffer-size temporary-directory parallel batch-size files0-from random-source",
);
const UNZIP: Spec = Spec::new("lvtTzZcpfunoqjaCKLMVX", "dPx", "", "");
const ZIPPER: Spec = Spec::new(
    "cdfhklLnNqrtvV123456789",
    "Sb",
    "stdout to-stdout decompress uncompress force keep list no-name name quiet recursive test verbose fast best \
     rsyncable",
    "suffix",
);
const SPLIT: Spec = Spec::new(
    "de",
    "abCln",
    "elide-empty-files unbuffered verbose separator",
    "suffix-length bytes line-bytes lines number additional-suffix numeric-suffixes hex-suffixes filter",
);

const CSPLIT: Spec = Spec::new(
    "kszq",
    "bfn",
    "keep-files quiet silent elide-empty-files suppress-matched",
    "suffix-format prefix digits",
);
const FALLOCATE: Spec = Spec::new(
    "cdinpxzv",
    "lo",
    "collapse-range dig-holes insert-range keep-size punch-hole posix zero-range verbose",
    "length offset",
);
/// `--tmpdir` takes its folder only as `--tmpdir=DIR`.
const MKTEMP: Spec = Spec::new("dqut", "p", "directory quiet dry-run tmpdir", "suffix");

/// Writers whose every write wt follows from their arguments (builds such as `make` and
/// `cargo` write more than their arguments say).
pub fn follows_writes(name: &str) -> bool {
    matches!(
        name,
        "rm" | "unlink"
            | "rmdir"
            | "shred"
            | "touch"
            | "mkdir"
            | "mkfifo"
            | "truncate"
            | "tee"
            | "mknod"
            | "chmod"
            | "chown"
            | "chgrp"
            | "install"
            | "cp"
            | "mv"
            | "ln"
            | "link"
            | "sort"
            | "unzip"
            | "gzip"
            | "gunzip"
            | "bzip2"
            | "bunzip2"
            | "xz"
            | "unxz"
            | "lzma"
            | "zstd"
            | "unzstd"
            | "lz4"
            | "split"
            | "csplit"
            | "fallocate"
            | "mktemp"
            | "dd"
            | "sed"
            | "curl"
            | "wget"
            | "tar"
            | "rsync"
            | "scp"
            | "zip"
            | "find"
    )
}

/// What a writer writes, when wt can read its arguments: the links it makes (`ln -s`).
pub fn check(checker: &mut Checker, name: &str, args: &[Arg], state: &State) -> Vec<(PathBuf, PathBuf)> {
    let parse = |spec: &Spec| options::parse(args, spec, false);
    match name {
        "ln" | "link" => return link(checker, name, parse(&LN), state),
        "cp" => {
            let made = copy_links(checker, &parse(&CP), state);
            write_operands(checker, name, args, state);
            return made;
        }
        "make" | "gmake" => make(checker, name, parse(&MAKE), state),
        "dd" => dd(checker, args, state),
        "sed" => super::sed::check(checker, args, state),
        "curl" | "wget" | "tar" | "rsync" | "scp" | "zip" | "cargo" => {
            super::downloads::check(checker, name, args, state)
        }
        "find" => super::find::check(checker, args, state),
        _ => write_operands(checker, name, args, state),
    }
    Vec::new()
}

/// The writes of a writer without rules of its own (`targets`).
fn write_operands(checker: &mut Checker, name: &str, args: &[Arg], state: &State) {
    let Some((parsed, targets)) = targets(name, args) else { return };
    let content = if matches!(name, "chmod" | "chown" | "chgrp" | "touch") {
        Content::Unchanged
    } else {
        Content::Unknown
    };
    // Modes, owners and times are not write rights for the kernel sandbox: what wt cannot follow
    // is refused (plain `touch` only sets a time to now; `-d`, `-t`, `-r` set any).
    let metadata = matches!(name, "chmod" | "chown" | "chgrp")
        || (name == "touch" && parsed.has(&["-d", "-t", "-r", "--date", "--reference"]));
    if metadata {
        checker.strictly(|checker| checker.write_all_holding(content, name, &parsed, &targets, state));
    } else {
        checker.write_all_holding(content, name, &parsed, &targets, state);
    }
}

/// The files a writer without rules of its own writes, and how its options were read; `None`
/// for a command that is not such a writer.
fn targets(name: &str, args: &[Arg]) -> Option<(Parsed, Vec<Arg>)> {
    let parse = |spec: &Spec| options::parse(args, spec, false);
    Some(match name {
        "rm" | "unlink" => with(parse(&RM), |p| p.operands.clone()),
        "rmdir" => with(parse(&RMDIR), |p| p.operands.clone()),
        "shred" => with(parse(&SHRED), |p| p.operands.clone()),
        "touch" => with(parse(&TOUCH), |p| p.operands.clone()),
        "mkdir" | "mkfifo" => with(parse(&MKDIR), |p| p.operands.clone()),
        "truncate" => with(parse(&TRUNCATE), |p| p.operands.clone()),
        "tee" => with(parse(&TEE), |p| p.operands.clone()),
        "mknod" => with(parse(&MKNOD), |p| p.operands.iter().take(1).cloned().collect()),
        "chmod" => with(parse_chmod(args), mode_then_paths),
        "chown" | "chgrp" => with(parse(&CHOWN), mode_then_paths),
        "install" => with(parse(&INSTALL), install_targets),
        "cp" => with(parse(&CP), destination),
        "mv" => with(parse(&MV), |p| {
            let mut all = p.values(&["-t", "--target-directory"]);
            all.extend(p.operands.iter().cloned());
            all
        }),
        "patch" => with(parse(&PATCH), patch_targets),
        "sort" => with(parse(&SORT), |p| p.values(&["-o", "--output", "-T", "--temporary-directory"])),
        "unzip" => with(parse(&UNZIP), |p| {
            let dirs = p.values(&["-d"]);
            if dirs.is_empty() { vec![Arg::literal(".")] } else { dirs }
        }),
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "lzma" | "zstd" | "unzstd" | "lz4" => {
            with(parse(&ZIPPER), |p| {
                if p.has(&["-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"]) {
                    Vec::new()
                } else {
                    p.operands.clone()
                }
            })
        }
        "split" => {
            with(parse(&SPLIT), |p| vec![p.operands.get(1).cloned().unwrap_or_else(|| Arg::literal("x"))])
        }
        "csplit" => with(parse(&CSPLIT), |p| {
            let prefix = p.values(&["-f", "--prefix"]);
            if prefix.is_empty() { vec![Arg::literal("xx")] } else { prefix }
        }),
        "fallocate" => with(parse(&FALLOCATE), |p| p.operands.clone()),
        "mktemp" => with(parse(&MKTEMP), temporary_file),
        "perl" => (Parsed::default(), perl_in_place(args)),
        "cc" | "gcc" | "g++" | "c++" | "clang" | "clang++" | "rustc" => {
            (Parsed::default(), option_values(args, &["-o"]))
        }
        _ => return None,
    })
}

fn with(parsed: Parsed, targets: impl Fn(&Parsed) -> Vec<Arg>) -> (Parsed, Vec<Arg>) {
    let targets = targets(&parsed);
    (parsed, targets)
}

/// `mktemp -p DIR`, `--tmpdir=DIR`, `mktemp DIR/x.XXX`: a new file (or folder) in DIR. Without
/// a folder it is made in the temporary folder: a new name, made exclusively, so nothing that
/// is there changes (and `$TMPDIR` is the sandbox's own inside it); that is not followed.
fn temporary_file(p: &Parsed) -> Vec<Arg> {
    if p.has(&["-u", "--dry-run"]) {
        return Vec::new();
    }
    let template = p.operands.last().cloned().unwrap_or_else(|| Arg::literal("tmp.XXXXXXXXXX"));
    let dir = p.values(&["-p", "--tmpdir"]).pop();
    match dir {
        Some(dir) => {
            let value = dir.value.as_deref().zip(template.value.as_deref()).map(|(d, t)| format!("{d}/{t}"));
            vec![Arg { value, shown: format!("{}/{}", dir.shown, template.shown), glob: false }]
        }
        None if template.text().contains('/') && !p.has(&["-t"]) => vec![template],
        None => Vec::new(),
    }
}

/// `chmod -w file`: a mode that starts with `-` is an operand, not an option.
fn parse_chmod(args: &[Arg]) -> Parsed {
    let is_mode = |a: &Arg| {
        a.text().len() > 1
            && a.text().starts_with('-')
            && a.text()[1..].chars().all(|c| "rwxXstugoa0123456789,+=-".contains(c))
    };
    let (modes, rest): (Vec<Arg>, Vec<Arg>) = args.iter().cloned().partition(is_mode);
    let mut parsed = options::parse(&rest, &CHMOD, false);
    if !modes.is_empty() {
        parsed.operands.insert(0, modes[0].clone());
    }
    parsed
}

/// `chmod MODE file…`, `chown OWNER file…` (no MODE with `--reference`).
fn mode_then_paths(p: &Parsed) -> Vec<Arg> {
    let skip = usize::from(!p.has(&["--reference"]));
    p.operands.iter().skip(skip).cloned().collect()
}

/// `cp a b dest`, `cp -t dest a b`: the destination.
fn destination(p: &Parsed) -> Vec<Arg> {
    let explicit = p.values(&["-t", "--target-directory"]);
    if !explicit.is_empty() {
        return explicit;
    }
    if p.operands.len() >= 2 { p.operands.last().cloned().into_iter().collect() } else { Vec::new() }
}

fn install_targets(p: &Parsed) -> Vec<Arg> {
    if p.has(&["-d", "--directory"]) { p.operands.clone() } else { destination(p) }
}

/// `ln [-s] target [link]`, `ln -t dir targets…`: where the links are made. A symbolic link
/// made here is remembered, so writes through it later in the command are followed; a hard
/// link must be to a file inside the worktree.
fn link(checker: &mut Checker, name: &str, parsed: Parsed, state: &State) -> Vec<(PathBuf, PathBuf)> {
    let dir = parsed.values(&["-t", "--target-directory"]);
    let (link, targets): (Arg, &[Arg]) = match (dir.first(), parsed.operands.as_slice()) {
        (Some(dir), all) => (dir.clone(), all),
        (None, [target]) => (Arg::literal("."), std::slice::from_ref(target)),
        (None, [targets @ .., last]) => (last.clone(), targets),
        (None, []) => return Vec::new(),
    };
    checker.write_all(name, &parsed, std::slice::from_ref(&link), state);
    if name == "link" || !parsed.has(&["-s", "--symbolic"]) {
        checker.hard_link_sources(name, targets, state);
        return Vec::new();
    }
    symbolic_link(checker, name, targets, &link, state)
}

/// `cp -l` (also in `-al`) makes hard links, `cp -s` symbolic ones, instead of copies.
fn copy_links(checker: &mut Checker, parsed: &Parsed, state: &State) -> Vec<(PathBuf, PathBuf)> {
    let dir = parsed.values(&["-t", "--target-directory"]);
    let (sources, destination) = match (dir.first(), parsed.operands.as_slice()) {
        (Some(dir), all) => (all, dir.clone()),
        (None, [sources @ .., last]) if !sources.is_empty() => (sources, last.clone()),
        _ => return Vec::new(),
    };
    if parsed.has(&["-l", "--link"]) {
        checker.hard_link_sources("cp -l", sources, state);
    }
    if parsed.has(&["-s", "--symbolic-link"]) {
        return symbolic_link(checker, "cp -s", sources, &destination, state);
    }
    Vec::new()
}

/// A symbolic link to `targets` made at `link`: remembered when there is one and wt knows both
/// (a later write through it in the command is followed); otherwise not followed.
fn symbolic_link(
    checker: &mut Checker,
    name: &str,
    targets: &[Arg],
    link: &Arg,
    state: &State,
) -> Vec<(PathBuf, PathBuf)> {
    let (Some(target), Some(at), Some(link_path)) = (
        targets.first().filter(|_| targets.len() == 1).and_then(Arg::exact),
        link.exact(),
        state.cwd.single(),
    ) else {
        checker.unclear(format!("`{name}` makes links wt cannot follow later in this command"));
        return Vec::new();
    };
    let place = super::paths::resolve(std::path::Path::new(at), &link_path.physical, &state.links);
    let place = if place.is_dir() {
        place.join(std::path::Path::new(target).file_name().unwrap_or_default())
    } else {
        place
    };
    vec![(place, PathBuf::from(target))]
}

/// `patch [-d dir] [-o out] [file [patchfile]]`: the file, or the files the patch names
/// (under the directory it runs in), its output, backups and rejects.
fn patch_targets(p: &Parsed) -> Vec<Arg> {
    let mut targets =
        p.values(&["-d", "--directory", "-o", "--output", "-B", "--prefix", "-r", "--reject-file"]);
    match p.operands.first() {
        Some(file) => targets.push(file.clone()),
        None if !p.has(&["-d", "--directory"]) => targets.push(Arg::literal(".")),
        None => {}
    }
    targets
}

/// `make -C dir`: runs (and writes) in that directory; `make -f file`: runs the recipes of
/// that file, which is not the project's when it is outside the worktree.
fn make(checker: &mut Checker, name: &str, parsed: Parsed, state: &State) {
    let dirs = parsed.values(&["-C", "--directory"]);
    checker.write_all(name, &parsed, &dirs, state);
    for file in parsed.values(&["-f", "--file", "--makefile"]) {
        if !checker.inside(file.exact(), state) {
            checker.unclear(format!("`{name} -f {}` runs recipes from outside the worktree", file.shown));
        }
    }
    if parsed.has(&["--eval"]) {
        checker.unclear(format!("`{name} --eval` adds recipes wt does not follow"));
    }
}

fn dd(checker: &mut Checker, args: &[Arg], state: &State) {
    const OPERANDS: &[&str] = &[
        "if", "of", "bs", "ibs", "obs", "cbs", "count", "skip", "seek", "iseek", "oseek", "conv", "iflag",
        "oflag", "status",
    ];
    for arg in args {
        match arg.value.as_deref().and_then(|t| t.split_once('=')) {
            Some(("of", path)) => {
                checker.write_target("dd", &Arg { value: Some(path.to_owned()), ..arg.clone() }, state)
            }
            Some((key, _)) if OPERANDS.contains(&key) => {}
            _ => checker.unclear(format!(
                "`dd {}` is an operand wt does not know, so it cannot tell where dd writes",
                arg.shown
            )),
        }
    }
}

/// `perl -i … files`: the files, when editing in place (perl's own code is a program, as
/// `python3 -c` is).
fn perl_in_place(args: &[Arg]) -> Vec<Arg> {
    let in_place = args
        .iter()
        .any(|a| a.text().starts_with('-') && !a.text().starts_with("--") && a.text().contains('i'));
    if !in_place {
        return Vec::new();
    }
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if matches!(text, "-e" | "-E" | "-M" | "-I") {
            i += 1;
        } else if !text.starts_with('-') || arg.value.is_none() {
            files.push(arg.clone());
        }
        i += 1;
    }
    let has_script = args.iter().any(|a| a.text().starts_with('-') && a.text().contains(['e', 'E']));
    if !has_script && !files.is_empty() {
        files.remove(0);
    }
    files
}

/// The values of options that name a file written (`-o file`, `-ofile`, `--output=file`).
pub fn option_values(args: &[Arg], names: &[&str]) -> Vec<Arg> {
    let mut out = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let text = arg.text();
        if names.contains(&text) {
            out.extend(args.get(i + 1).cloned());
        } else if let Some(value) = names.iter().find_map(|n| {
            let attached =
                if n.starts_with("--") { text.strip_prefix(&format!("{n}=")) } else { text.strip_prefix(n) };
            attached.filter(|v| !v.is_empty())
        }) {
            out.push(Arg { value: Some(value.to_owned()), ..arg.clone() });
        }
    }
    out
}
