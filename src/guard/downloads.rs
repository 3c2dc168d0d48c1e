//! Writers with many options: downloaders (`curl`, `wget`), archivers (`tar`, `zip`), copiers
//! to other machines (`rsync`, `scp`) and `cargo` (whose manifest and target folder can be
//! anywhere). Options that run other programs (`tar --to-command`, `rsync -e`, `scp -S`) are
//! not followed.

use super::arg::Arg;
use super::checker::Checker;
use super::options::{self, Parsed, Spec};
use super::state::State;
use super::written::Content;

const CURL: Spec = Spec {
    flags: "fsSLvkiIglnqjJNROZ#0123456aBGMpV",
    values: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
    long_flags: "silent show-error fail fail-with-body fail-early location location-trusted verbose insecure \
                 include head globoff netrc netrc-optional compressed remote-name remote-name-all \
                 remote-header-name create-dirs progress-bar no-progress-meter http1.0 http1.1 http2 http3 get \
                 ipv4 ipv6 retry-connrefused retry-all-errors no-buffer raw no-keepalive append list-only ssl \
                 ssl-reqd tlsv1.2 tlsv1.3 disable path-as-is tcp-nodelay no-sessionid styled-output \
                 no-styled-output show-headers",
    long_values: "output output-dir cookie-jar dump-header trace trace-ascii stderr libcurl etag-save etag-compare \
                  hsts alt-svc config header data data-raw data-binary data-urlencode data-ascii form form-string \
                  request user user-agent referer cookie max-time connect-timeout retry retry-delay retry-max-time \
                  url write-out proxy upload-file continue-at range cacert capath cert key limit-rate max-filesize \
                  resolve connect-to json variable oauth2-bearer proto proto-redir interface dns-servers \
                  speed-limit speed-time netrc-file max-redirs parallel-max time-cond unix-socket",
};

const WGET: Spec = Spec {
    flags: "VhbdqvFcNSxEkKmrpLH46n",
    values: "eoaiBtOTwQPlARDIX",
    long_flags: "quiet verbose no-verbose debug continue timestamping server-response spider force-directories \
                 no-directories no-host-directories adjust-extension convert-links backup-converted mirror \
                 recursive page-requisites no-parent no-clobber no-check-certificate show-progress no-cache \
                 content-disposition trust-server-names relative span-hosts inet4-only inet6-only no-config \
                 https-only ignore-case",
    long_values: "output-document directory-prefix output-file append-output execute input-file tries timeout wait \
                  quota level accept reject domains include-directories exclude-directories user-agent header \
                  post-data post-file method body-data user password save-cookies load-cookies warc-file \
                  rejected-log limit-rate cut-dirs default-page progress max-redirect ca-certificate referer",
};

const TAR: Spec = Spec {
    flags: "AcdrtuxzjJavkpPOhwWBiSlmMUG",
    values: "fCTXbgKLNVIFH",
    long_flags: "create extract get list append update catenate concatenate delete diff compare gzip gunzip bzip2 \
                 xz zstd lzma lzip auto-compress no-auto-compress verbose keep-old-files skip-old-files \
                 keep-newer-files overwrite overwrite-dir no-overwrite-dir preserve-permissions same-permissions \
                 no-same-permissions absolute-names to-stdout dereference hard-dereference interactive \
                 ignore-zeros sparse one-file-system touch multi-volume remove-files no-recursion recursion \
                 wildcards no-wildcards no-same-owner same-owner numeric-owner totals checkpoint \
                 show-transformed-names unlink-first recursive-unlink verify anchored no-anchored ignore-case \
                 exclude-vcs exclude-vcs-ignores exclude-backups exclude-caches full-time utc null unquote \
                 ignore-failed-read atime-preserve posix force-local acls xattrs selinux delay-directory-restore \
                 one-top-level backup no-xattrs no-acls",
    long_values: "file directory files-from exclude-from exclude blocking-factor listed-incremental starting-file \
                  tape-length newer after-date newer-mtime label use-compress-program to-command info-script \
                  new-volume-script index-file transform xform strip-components owner group mode mtime \
                  checkpoint-action rsh-command sort format warning record-size suffix volno-file",
};

const RSYNC: Spec = Spec {
    flags: "avzrlptgoDhPnucqHAXSxWRbCiImyOJKL8",
    values: "eBfT",
    long_flags: "archive verbose compress recursive links perms times group owner devices specials human-readable \
                 progress partial dry-run update checksum quiet hard-links acls xattrs sparse one-file-system \
                 whole-file relative backup cvs-exclude itemize-changes ignore-times prune-empty-dirs fuzzy \
                 omit-dir-times omit-link-times copy-links copy-unsafe-links safe-links delete delete-before \
                 delete-during delete-after delete-excluded force existing ignore-existing remove-source-files \
                 stats no-motd inplace append append-verify size-only numeric-ids mkpath copy-dirlinks \
                 keep-dirlinks",
    long_values: "exclude include exclude-from include-from filter files-from rsh rsync-path log-file backup-dir \
                  temp-dir partial-dir write-batch only-write-batch read-batch suffix chmod chown bwlimit timeout \
                  max-size min-size compare-dest copy-dest link-dest out-format log-file-format password-file port \
                  info debug max-delete modify-window usermap groupmap contimeout block-size compress-level \
                  checksum-choice",
};

const SCP: Spec = Spec { flags: "346ABCOpqrTvR", values: "cFiJloPS", long_flags: "", long_values: "" };

const ZIP: Spec = Spec {
    flags: "0123456789AcdDeEfFgjJklLmoqrRSuvwXyz",
    values: "bnOPtxi",
    long_flags: "",
    long_values: "",
};

pub fn check(checker: &mut Checker, name: &str, args: &[Arg], state: &State) {
    match name {
        "curl" => curl(checker, args, state),
        "wget" => wget(checker, args, state),
        "tar" => tar(checker, args, state),
        "rsync" => rsync(checker, args, state),
        "scp" => {
            let parsed = options::parse(args, &SCP, false);
            runs_programs(checker, name, &parsed, &["-S", "-o", "-F"]);
            let dest: Vec<Arg> = parsed
                .operands
                .last()
                .filter(|_| parsed.operands.len() >= 2)
                .filter(|a| !is_remote(a))
                .cloned()
                .into_iter()
                .collect();
            checker.write_all(name, &parsed, &dest, state);
        }
        "zip" => {
            let parsed = options::parse(args, &ZIP, false);
            let mut targets: Vec<Arg> = parsed.operands.iter().take(1).cloned().collect();
            targets.extend(parsed.values(&["-O"]));
            if parsed.has(&["-m"]) {
                targets.extend(parsed.operands.iter().skip(1).cloned());
            }
            checker.write_all(name, &parsed, &targets, state);
        }
        "cargo" => cargo(checker, args, state),
        _ => {}
    }
}

fn runs_programs(checker: &mut Checker, name: &str, parsed: &Parsed, options: &[&str]) {
    if parsed.has(options) {
        checker
            .unclear(format!("`{name}` runs another program given in its options, which wt does not follow"));
    }
}

/// `host:path` or `rsync://…`: not a path on this machine.
fn is_remote(arg: &Arg) -> bool {
    let text = arg.text();
    text.contains("://") || text.split('/').next().is_some_and(|first| first.contains(':'))
}

fn curl(checker: &mut Checker, args: &[Arg], state: &State) {
    let parsed = options::parse(args, &CURL, false);
    if parsed.has(&["-K", "--config"]) {
        checker.unclear("`curl -K` reads options from a file wt does not follow".into());
    }
    let mut targets = parsed.values(&[
        "-o",
        "--output",
        "-c",
        "--cookie-jar",
        "-D",
        "--dump-header",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--libcurl",
        "--etag-save",
        "--hsts",
        "--alt-svc",
    ]);
    let dirs = parsed.values(&["--output-dir"]);
    targets.extend(dirs.iter().cloned());
    if dirs.is_empty()
        && parsed.has(&["-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"])
    {
        targets.push(Arg::literal("."));
    }
    checker.write_all_holding(Content::Download, "curl", &parsed, &targets, state);
}

fn wget(checker: &mut Checker, args: &[Arg], state: &State) {
    let parsed = options::parse(args, &WGET, false);
    if parsed.has(&["-e", "--execute"]) {
        checker.unclear("`wget -e` runs settings that can change where it writes".into());
    }
    let mut targets = parsed.values(&[
        "-O",
        "--output-document",
        "-o",
        "--output-file",
        "-a",
        "--append-output",
        "--save-cookies",
        "--warc-file",
        "--rejected-log",
    ]);
    let dirs = parsed.values(&["-P", "--directory-prefix"]);
    if dirs.is_empty() && !parsed.has(&["-O", "--output-document", "--spider"]) {
        targets.push(Arg::literal("."));
    }
    targets.extend(dirs);
    checker.write_all_holding(Content::Download, "wget", &parsed, &targets, state);
}

/// `tar`: old-style bundles (`tar czf out.tgz dir`) are rewritten as options first.
fn tar(checker: &mut Checker, args: &[Arg], state: &State) {
    let args = old_style_tar(args);
    let parsed = options::parse(&args, &TAR, false);
    runs_programs(
        checker,
        "tar",
        &parsed,
        &[
            "--to-command",
            "-I",
            "--use-compress-program",
            "--checkpoint-action",
            "--info-script",
            "-F",
            "--new-volume-script",
            "--rsh-command",
        ],
    );
    let extracts = parsed.has(&["-x", "--extract", "--get"]) && !parsed.has(&["-O", "--to-stdout"]);
    let creates = parsed.has(&[
        "-c",
        "--create",
        "-r",
        "--append",
        "-u",
        "--update",
        "-A",
        "--catenate",
        "--concatenate",
        "--delete",
    ]);
    let mut targets = parsed.values(&["-g", "--listed-incremental", "--index-file"]);
    if extracts {
        if parsed.has(&["-P", "--absolute-names"]) {
            checker.unclear("`tar -P` writes wherever the archive's names say".into());
        }
        let dirs = parsed.values(&["-C", "--directory"]);
        if dirs.is_empty() { targets.push(Arg::literal(".")) } else { targets.extend(dirs) }
    }
    if creates {
        targets.extend(parsed.values(&["-f", "--file"]).into_iter().filter(|f| !f.is("-")));
    }
    if parsed.has(&["--remove-files"]) {
        targets.extend(parsed.operands.iter().cloned());
    }
    checker.write_all("tar", &parsed, &targets, state);
}

/// `tar czf file dir` → `tar -c -z -f file dir`: letters that take a value take the next
/// words in order.
fn old_style_tar(args: &[Arg]) -> Vec<Arg> {
    let Some(first) = args
        .first()
        .and_then(|a| a.exact())
        .filter(|t| !t.starts_with('-') && t.chars().all(|c| c.is_ascii_alphabetic()))
    else {
        return args.to_vec();
    };
    let mut out = Vec::new();
    let mut values = args[1..].iter();
    for c in first.chars() {
        out.push(Arg::literal(&format!("-{c}")));
        if TAR.values.contains(c) {
            out.extend(values.next().cloned());
        }
    }
    out.extend(values.cloned());
    out
}

fn rsync(checker: &mut Checker, args: &[Arg], state: &State) {
    let parsed = options::parse(args, &RSYNC, false);
    runs_programs(checker, "rsync", &parsed, &["-e", "--rsh", "--rsync-path"]);
    let mut targets = parsed.values(&[
        "--log-file",
        "--backup-dir",
        "--temp-dir",
        "-T",
        "--partial-dir",
        "--write-batch",
        "--only-write-batch",
    ]);
    if let [sources @ .., dest] = parsed.operands.as_slice() {
        if !sources.is_empty() && !is_remote(dest) {
            targets.push(dest.clone());
        }
        link_dest(checker, &parsed, dest, state);
        if parsed.has(&["--remove-source-files"]) {
            targets.extend(sources.iter().filter(|s| !is_remote(s)).cloned());
        }
    }
    checker.write_all("rsync", &parsed, &targets, state);
}

/// `rsync --link-dest=DIR`: files unchanged since DIR are hard links to DIR's, which must be
/// inside the worktree; a relative DIR is relative to the destination (on another machine
/// when the destination is).
fn link_dest(checker: &mut Checker, parsed: &Parsed, dest: &Arg, state: &State) {
    if is_remote(dest) {
        return;
    }
    for dir in parsed.values(&["--link-dest"]) {
        let path = match dir.value.as_deref() {
            Some(dir) if dir.starts_with('/') => Some(dir.to_owned()),
            Some(dir) => dest.value.as_deref().map(|dest| format!("{dest}/{dir}")),
            None => None,
        };
        let source = Arg { value: path, shown: dir.shown.clone(), glob: dir.glob || dest.glob };
        checker.hard_link_sources("rsync --link-dest", std::slice::from_ref(&source), state);
    }
}

/// `cargo`: builds write the project's `target/` next to its manifest, or `--target-dir`;
/// `cargo new|init PATH` makes a project there; `cargo install` writes `--root` (default: the
/// user's cargo home, which wt does not follow).
fn cargo(checker: &mut Checker, args: &[Arg], state: &State) {
    let until_passthrough: Vec<&Arg> = args.iter().take_while(|a| !a.is("--")).collect();
    let value_of = |name: &str| -> Vec<Arg> {
        let mut out = Vec::new();
        for (i, arg) in until_passthrough.iter().enumerate() {
            if arg.is(name) {
                out.extend(until_passthrough.get(i + 1).map(|a| (*a).clone()));
            } else if let Some(v) = arg.text().strip_prefix(&format!("{name}=")) {
                out.push(Arg { value: Some(v.to_owned()), ..(*arg).clone() });
            }
        }
        out
    };
    for manifest in value_of("--manifest-path") {
        let dir = manifest.value.as_deref().map(|m| {
            std::path::Path::new(m).parent().map_or(".".into(), |p| {
                if p.as_os_str().is_empty() { ".".into() } else { p.display().to_string() }
            })
        });
        checker.write_target("cargo --manifest-path", &Arg { value: dir, ..manifest.clone() }, state);
    }
    for dir in value_of("--target-dir").into_iter().chain(value_of("--root")).chain(value_of("-C")) {
        checker.write_target("cargo", &dir, state);
    }
    if !value_of("--config").is_empty() {
        checker.unclear("`cargo --config` can change where cargo writes; wt does not follow it".into());
    }
    let sub = until_passthrough.iter().find(|a| !a.text().starts_with('-')).and_then(|a| a.exact());
    match sub {
        Some("new" | "init") => {
            let target = until_passthrough
                .iter()
                .skip_while(|a| !a.is("new") && !a.is("init"))
                .skip(1)
                .find(|a| !a.text().starts_with('-'));
            checker.write_target("cargo new", target.copied().unwrap_or(&Arg::literal(".")), state);
        }
        Some("install") if value_of("--root").is_empty() => {
            checker.unclear(
                "`cargo install` writes into the cargo home outside the worktree; pass --root inside it"
                    .into(),
            );
        }
        _ => {}
    }
}
