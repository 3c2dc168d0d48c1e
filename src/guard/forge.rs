//! git-spice and gh: reading the stack and the forge is fine; changing them is the engine's
//! (`wt submit` at the end of the run). `gh api` may only GET: `-X`/`--method` other than GET,
//! and fields (`-f`, `-F`, `--input`, which make gh POST), are refused.

use super::arg::Arg;
use super::checker::Checker;
use super::options::positionals;
use super::state::State;

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
                checker.write_target("gs", &Arg::literal(file), state);
            }
        }
        return;
    }
    let words = positionals(args);
    let command = words.first().map(|a| a.value.clone());
    let read_only = match &command {
        None => true,
        Some(Some(c)) => matches!(c.as_str(), "log" | "l" | "ls" | "ll" | "version" | "help"),
        Some(None) => false,
    };
    if !read_only {
        checker.deny(format!(
            "git-spice {} changes the stack, which the engine owns; commit on this worktree's branch in {} and wt \
             stacks and submits it",
            words.first().map_or("", |a| a.shown.as_str()),
            checker.root()
        ));
    }
}

/// gh: reading is fine; anything that writes to the forge is the engine's.
pub fn gh(checker: &mut Checker, args: &[Arg]) {
    let words: Vec<&Arg> = positionals(args);
    let texts: Vec<Option<&str>> = words.iter().map(|a| a.exact()).collect();
    let allowed = match texts.as_slice() {
        [] | [Some("status" | "search" | "browse" | "version" | "help"), ..] => true,
        [Some("auth"), Some("status"), ..] => true,
        [Some("api"), ..] => api_reads(args),
        [Some(_), Some(verb), ..] => {
            matches!(*verb, "view" | "list" | "status" | "diff" | "checks" | "search")
        }
        _ => false,
    };
    if !allowed {
        let shown: Vec<&str> = words.iter().take(2).map(|a| a.shown.as_str()).collect();
        checker.deny(format!(
            "gh {} writes to the forge (or cannot be read before it runs); the engine submits the stack at the end \
             of the run (`wt submit`), so leave that out of the work in {}",
            shown.join(" "),
            checker.root()
        ));
    }
}

/// `gh api` that only reads: the method is GET (given or implied) and every argument is known.
fn api_reads(args: &[Arg]) -> bool {
    if args.iter().any(|a| a.value.is_none()) {
        return false;
    }
    let mut method = None;
    let mut fields = false;
    let mut graphql_mutation = false;
    let mut from_file = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        let next = args.get(i + 1).map(Arg::text);
        from_file |=
            text.contains("=@") || next.is_some_and(|n| n.contains("=@")) && matches!(text, "-F" | "--field");
        match text {
            "-X" | "--method" => {
                method = next.map(str::to_owned);
                i += 1;
            }
            "-f" | "-F" | "--field" | "--raw-field" | "--input" => {
                fields = true;
                graphql_mutation |= next.is_some_and(|n| n.contains("mutation"));
                i += 1;
            }
            _ if text.starts_with("-X") => method = Some(text[2..].to_owned()),
            _ if text.starts_with("--method=") => method = Some(text["--method=".len()..].to_owned()),
            _ if text.starts_with("--field=")
                || text.starts_with("--raw-field=")
                || text.starts_with("--input=") =>
            {
                fields = true;
                graphql_mutation |= text.contains("mutation");
            }
            _ if text.starts_with("-f") || text.starts_with("-F") => {
                fields = true;
                graphql_mutation |= text.contains("mutation");
            }
            _ => {}
        }
        i += 1;
    }
    let graphql = positionals(args).get(1).is_some_and(|a| a.is("graphql"));
    match method {
        Some(method) => method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD"),
        None if graphql => !graphql_mutation && !from_file,
        None => !fields,
    }
}
