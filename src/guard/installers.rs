//! Package managers' commands that write outside the worktree, into what the user's later
//! sessions run: a global install (`npm install -g`, `pnpm add -g`, `yarn global add`), the
//! user's settings (`npm config set`, `go env -w`, `pip config set`), and pip's installs with a
//! folder of their own (`--target`, `--prefix`, `--root`, `--src`) or into the user's site
//! (`--user`). A project's own install (`npm install`, `pip install` into the worktree's venv) is
//! not followed here: where it writes (node_modules, the venv, the caches) is the toolchain's
//! business, as cargo's is.

use super::arg::Arg;
use super::checker::Checker;
use super::state::State;

pub fn handles(name: &str) -> bool {
    matches!(name, "npm" | "pnpm" | "yarn" | "go" | "pip" | "pip3") || name.starts_with("pip3.")
}

pub fn check(checker: &mut Checker, name: &str, args: &[Arg], state: &State) {
    let words: Vec<&str> = args.iter().filter(|a| !a.text().starts_with('-')).map(Arg::text).collect();
    let root = checker.root();
    match name {
        "npm" | "pnpm" | "yarn" => {
            let global = args.iter().any(|a| matches!(a.text(), "-g" | "--global" | "--location=global"))
                || words.first() == Some(&"global");
            for folder in super::writers::option_values(args, &["--prefix", "-C", "--dir"]) {
                checker.write_target(name, &folder, state);
            }
            let project = args.iter().any(|a| a.is("--location=project"));
            let settings = matches!(
                words.as_slice(),
                ["config" | "c", "set" | "delete" | "edit" | "fix", ..] | ["set", ..]
            );
            if global {
                checker.deny(format!(
                    "`{name}` with a global install writes {name}'s global folder, outside the worktree {root}, and \
                     puts programs on the user's PATH; install it into the project as a dev dependency and run it \
                     from there (`npx …`)"
                ));
            } else if settings && !project {
                checker.deny(format!(
                    "`{name} config` changes {name}'s settings for the user (~/.npmrc), outside the worktree {root}; \
                     pass the setting to the one command (`{name} --name=value …`) or use `--location=project`"
                ));
            }
        }
        "go" if words.first() == Some(&"env") && args.iter().any(|a| a.is("-w") || a.is("-u")) => {
            checker.deny(format!(
                "`go env -w` writes go's settings for the user, outside the worktree {root}; set the variable for \
                 the one command instead (`GOFLAGS=… go build`)"
            ));
        }
        "go" => {}
        _ => pip(checker, name, args, state),
    }
}

/// `pip install --target DIR …` (and `--prefix`, `--root`, `--src`): writes DIR; `--user`:
/// the user's site-packages; `pip config set|unset|edit`: the user's pip settings.
pub fn pip(checker: &mut Checker, name: &str, args: &[Arg], state: &State) {
    let root = checker.root();
    let words: Vec<&str> = args.iter().filter(|a| !a.text().starts_with('-')).map(Arg::text).collect();
    match words.as_slice() {
        ["config", "set" | "unset" | "edit", ..] if !args.iter().any(|a| a.is("--site")) => checker.deny(format!(
            "`{name} config` changes pip's settings for the user, outside the worktree {root}; pass the setting to \
             the one command, or use `--site` inside the worktree's venv"
        )),
        ["install" | "download" | "wheel", ..] => {
            let folders = super::writers::option_values(
                args,
                &["-t", "--target", "--prefix", "--root", "--src", "-d", "--dest", "-w", "--wheel-dir"],
            );
            for folder in folders {
                checker.write_target(name, &folder, state);
            }
            if args.iter().any(|a| a.is("--user")) {
                checker.deny(format!(
                    "`{name} install --user` writes the user's site-packages (~/.local), outside the worktree {root}; \
                     install into a venv inside it (`python3 -m venv .venv && .venv/bin/pip install …`)"
                ));
            }
        }
        _ => {}
    }
}
