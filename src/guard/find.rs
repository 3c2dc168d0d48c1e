//! `find`: `-delete` removes what it finds under its starting points; `-exec`/`-ok` run a
//! command with `{}` standing for a found path (under a starting point, which stands in for
//! it); `-fprint`, `-fprintf` and `-fls` write a file.

use super::arg::Arg;
use super::checker::{Checker, Stdin};
use super::state::State;

/// Options before the starting points, and those of them that take a value.
const GLOBAL: &[&str] = &["-H", "-L", "-P"];
const GLOBAL_WITH_VALUE: &[&str] = &["-D"];

pub fn check(checker: &mut Checker, args: &[Arg], state: &State) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if GLOBAL.contains(&arg.text()) || arg.text().starts_with("-O") {
            i += 1;
        } else if GLOBAL_WITH_VALUE.contains(&arg.text()) {
            i += 2;
        } else {
            break;
        }
    }
    let rest = args.get(i..).unwrap_or_default();
    let is_expression = |a: &Arg| {
        a.value
            .as_deref()
            .is_some_and(|t| (t.starts_with('-') && t.len() > 1) || matches!(t, "(" | "!" | ","))
    };
    let mut starts: Vec<Arg> = rest.iter().take_while(|a| !is_expression(a)).cloned().collect();
    let expression = &rest[starts.len()..];
    if starts.is_empty() {
        starts.push(Arg::literal("."));
    }
    let mut j = 0;
    while let Some(arg) = expression.get(j) {
        j += 1;
        match arg.value.as_deref() {
            Some("-delete") => starts.iter().for_each(|s| checker.write_target("find -delete", s, state)),
            Some("-fprint" | "-fprint0" | "-fls" | "-fprintf") => {
                if let Some(file) = expression.get(j) {
                    checker.write_target("find", file, state);
                }
                j += if arg.is("-fprintf") { 2 } else { 1 };
            }
            Some(action @ ("-exec" | "-execdir" | "-ok" | "-okdir")) => {
                let command: Vec<&Arg> =
                    expression[j..].iter().take_while(|w| !w.is(";") && !w.is("+")).collect();
                j += command.len() + 1;
                exec(checker, action, &command, &starts, state);
            }
            None => {
                checker.unclear(format!("`find` gets `{}`, which wt cannot know before it runs", arg.shown))
            }
            _ => {}
        }
    }
}

/// `-exec command {} ;` (and `-execdir`, `-ok`): the command runs once per found path, which
/// is under a starting point; `-execdir` runs it in the found path's folder.
fn exec(checker: &mut Checker, action: &str, command: &[&Arg], starts: &[Arg], state: &State) {
    for start in starts {
        let run: Vec<Arg> = command
            .iter()
            .map(|w| Arg { value: w.value.as_deref().map(|v| v.replace("{}", start.text())), ..(*w).clone() })
            .collect();
        let mut local = state.clone();
        if action.ends_with("dir") {
            let Some(dir) = start.exact() else { continue };
            match super::directories::change(checker, dir, state, true) {
                Ok(cwd) => local.cwd = cwd,
                Err(_) => {
                    checker.unclear(format!("`find {action}` runs in a folder wt could not follow"));
                    continue;
                }
            }
        }
        checker.run(&run, local, &Stdin::Unknown);
    }
}
