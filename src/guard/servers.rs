//! Programs that ask a server running outside the sandbox to do something: terminal
//! multiplexers (`tmux`, `screen`), the service manager (`systemd-run`, `systemctl`, `busctl`,
//! `dbus-send`), container engines (`docker`, `podman`, `nerdctl`), running editors
//! (`emacsclient`, `code`), schedulers (`at`, `batch`, `crontab`, `launchctl`) and the desktop
//! (`xdg-open`, `open`). The kernel cannot contain what another process does on the agent's
//! behalf (Landlock does not restrict connecting to a Unix socket), and what they start may
//! outlive the task, so these are refused in every mode; only their reading subcommands (`tmux
//! ls`, `docker ps`, `systemctl status`, `crontab -l`, …) are understood.

use super::arg::Arg;
use super::checker::Checker;

pub fn handles(name: &str) -> bool {
    matches!(
        name,
        "tmux"
            | "screen"
            | "systemd-run"
            | "systemctl"
            | "busctl"
            | "dbus-send"
            | "gdbus"
            | "docker"
            | "docker-compose"
            | "podman"
            | "podman-compose"
            | "nerdctl"
            | "emacsclient"
            | "code"
            | "code-insiders"
            | "codium"
            | "cursor"
            | "at"
            | "batch"
            | "atrm"
            | "crontab"
            | "launchctl"
            | "xdg-open"
            | "open"
    )
}

/// Options of container engines (and their `compose`) that take the next word.
const ENGINE_VALUES: &[&str] = &[
    "-H",
    "--host",
    "-c",
    "--context",
    "--config",
    "-l",
    "--log-level",
    "--tlscacert",
    "--tlscert",
    "--tlskey",
    "--connection",
    "--url",
    "--root",
    "--runroot",
    "--namespace",
    "-n",
    "-f",
    "--file",
    "-p",
    "--project-name",
    "--profile",
    "--env-file",
    "--project-directory",
    "--ansi",
    "--progress",
    "--parallel",
];

/// What each server's reading subcommands are.
const TMUX_READS: &[&str] = &[
    "ls",
    "list-sessions",
    "lsw",
    "list-windows",
    "lsp",
    "list-panes",
    "lsc",
    "list-clients",
    "lsb",
    "list-buffers",
    "lsk",
    "list-keys",
    "lscm",
    "list-commands",
    "has",
    "has-session",
    "show",
    "show-options",
    "showw",
    "show-window-options",
    "showenv",
    "show-environment",
    "show-hooks",
    "info",
    "server-info",
    "display",
    "display-message",
    "capturep",
    "capture-pane",
];
const SYSTEMCTL_READS: &[&str] = &[
    "status",
    "show",
    "cat",
    "list-units",
    "list-unit-files",
    "list-sockets",
    "list-timers",
    "list-jobs",
    "list-dependencies",
    "list-machines",
    "is-active",
    "is-enabled",
    "is-failed",
    "is-system-running",
    "help",
    "show-environment",
    "get-default",
];
const ENGINE_READS: &[&str] = &[
    "ps", "images", "inspect", "logs", "version", "info", "top", "port", "diff", "history", "search",
    "stats", "events", "ls", "df", "config", "show",
];
const ENGINE_GROUPS: &[&str] = &[
    "image",
    "container",
    "volume",
    "network",
    "system",
    "compose",
    "context",
    "buildx",
    "builder",
    "manifest",
];
const BUSCTL_READS: &[&str] =
    &["list", "status", "monitor", "capture", "tree", "introspect", "get-property", "help"];
const LAUNCHCTL_READS: &[&str] =
    &["list", "print", "print-cache", "print-disabled", "blame", "version", "help"];

pub fn check(checker: &mut Checker, name: &str, args: &[Arg]) {
    let informs =
        !args.is_empty() && args.iter().all(|a| matches!(a.text(), "--version" | "--help" | "-V" | "-h"));
    if informs {
        return;
    }
    let texts: Vec<&str> = args.iter().map(|a| a.value.as_deref().unwrap_or("\0")).collect();
    let reads = match name {
        "tmux" => tmux_reads(&texts),
        "screen" => matches!(texts.as_slice(), ["-ls" | "-list", ..]),
        "systemctl" => first_operand(
            &texts,
            &[
                "-t",
                "--type",
                "--state",
                "-p",
                "--property",
                "-n",
                "--lines",
                "-o",
                "--output",
                "-H",
                "--host",
                "-M",
                "--machine",
            ],
        )
        .is_none_or(|sub| SYSTEMCTL_READS.contains(&sub)),
        "busctl" => first_operand(&texts, &[]).is_some_and(|sub| BUSCTL_READS.contains(&sub)),
        "gdbus" => matches!(texts.first(), Some(&("introspect" | "monitor" | "wait" | "help"))),
        "docker" | "podman" | "nerdctl" | "docker-compose" | "podman-compose" => engine_reads(name, &texts),
        "code" | "code-insiders" | "codium" | "cursor" => texts
            .iter()
            .all(|t| matches!(*t, "--list-extensions" | "--show-versions" | "--status" | "-v" | "-h")),
        "at" => {
            texts.first().is_some_and(|t| matches!(*t, "-l" | "-c"))
                && texts.iter().all(|t| matches!(*t, "-l" | "-c") || t.chars().all(|c| c.is_ascii_digit()))
        }
        "crontab" => texts.contains(&"-l") && !texts.iter().any(|t| matches!(*t, "-e" | "-r" | "-i" | "-")),
        "launchctl" => texts.first().is_some_and(|sub| LAUNCHCTL_READS.contains(sub)),
        _ => false,
    };
    if !reads {
        checker.deny(format!("`{}` {}", shown(name, args), why(name)));
    }
}

/// The command as typed, shortened.
fn shown(name: &str, args: &[Arg]) -> String {
    let words: Vec<&str> = args.iter().take(2).map(|a| a.shown.as_str()).collect();
    let more = if args.len() > 2 { " …" } else { "" };
    format!("{name} {}{more}", words.join(" ")).trim_end().to_owned()
}

/// Why a server's command is refused, and what to do instead.
fn why(name: &str) -> &'static str {
    match name {
        "tmux" | "screen" => {
            "asks the terminal multiplexer's server — running outside this agent's sandbox, as the user — to run or \
             type something: what it runs is not kept in the worktree and can outlive the task. Run the command \
             directly here (add `&` to keep it in the background while this command runs)"
        }
        "systemd-run" | "systemctl" | "busctl" | "dbus-send" | "gdbus" => {
            "asks the service manager (over D-Bus), outside this agent's sandbox, to start or change something: it \
             runs outside the worktree and can outlive the task. Run the program directly here instead"
        }
        "docker" | "podman" | "nerdctl" | "docker-compose" | "podman-compose" => {
            "asks the container engine, outside this agent's sandbox (often as root), to run or change containers, \
             images or volumes: what it does is not kept in the worktree (a bind mount reaches any file). Run the \
             program directly in the worktree; if the task needs containers, leave that step to the user"
        }
        "emacsclient" | "code" | "code-insiders" | "codium" | "cursor" => {
            "asks the user's running editor, outside this agent's sandbox, to evaluate code, install an extension or \
             open files it may later write. Edit files with the Edit tool inside the worktree instead"
        }
        "at" | "batch" | "atrm" | "crontab" | "launchctl" => {
            "installs or changes a job the scheduler runs later as the user, outside any sandbox and after the task \
             ends. Run the command now, inside the worktree, instead"
        }
        _ => {
            "asks the desktop, outside this agent's sandbox, to open something with the program it chooses, which \
             runs outside the worktree. Read the file instead"
        }
    }
}

/// The first word that is not an option or an option's value.
fn first_operand<'a>(texts: &[&'a str], values: &[&str]) -> Option<&'a str> {
    let mut i = 0;
    while let Some(text) = texts.get(i) {
        i += 1;
        if values.contains(text) {
            i += 1;
        } else if !text.starts_with('-') {
            return Some(text);
        }
    }
    None
}

/// `tmux [options] command [args] [; command …]`: every command reads (`ls`, `display -p`,
/// `capture-pane -p`), and no format runs a shell (`#(…)`).
fn tmux_reads(texts: &[&str]) -> bool {
    if texts.iter().any(|t| t.contains("#(")) {
        return false;
    }
    let start = first_operand(texts, &["-c", "-f", "-L", "-S", "-T"])
        .map_or(texts.len(), |first| texts.iter().position(|t| *t == first).unwrap_or(texts.len()));
    if texts[..start].contains(&"-c") {
        return false;
    }
    if start == texts.len() {
        // No command: `tmux` starts a new session.
        return texts.contains(&"-V");
    }
    texts[start..].split(|t| *t == ";").all(|command| match command {
        [name, rest @ ..] if TMUX_READS.contains(name) => {
            !matches!(*name, "display" | "display-message" | "capturep" | "capture-pane")
                || rest.contains(&"-p")
        }
        _ => false,
    })
}

/// `docker [options] SUBCOMMAND …`, `docker compose [options] SUBCOMMAND …`: a reading one.
fn engine_reads(name: &str, texts: &[&str]) -> bool {
    let Some(first) = first_operand(texts, ENGINE_VALUES) else { return texts.contains(&"-v") };
    let (group, sub) = if name.ends_with("-compose") {
        ("compose", Some(first))
    } else if ENGINE_GROUPS.contains(&first) {
        let after = texts.iter().position(|t| *t == first).map_or(&[][..], |i| &texts[i + 1..]);
        (first, first_operand(after, ENGINE_VALUES))
    } else {
        ("", Some(first))
    };
    match (group, sub) {
        (_, Some(sub)) => ENGINE_READS.contains(&sub),
        // `docker image` alone prints its help.
        (group, None) => !group.is_empty(),
    }
}
