//! `awk` programs: read for what lets them write or run something — `print … > file` (and
//! `>>`), pipes (`print | "cmd"`, `"cmd" | getline`, `|&`), `system()`, `getline < file`,
//! `@load` and `@include` — which wt does not follow. Any other program only reads its input and
//! prints, and is understood. `print > "/dev/stderr"` (or stdout, null) is no file. gawk's
//! `--sandbox` turns all of these off. A program file (`-f prog.awk`) inside the worktree is
//! the project's code, as for any interpreter.

use super::arg::Arg;
use super::checker::Checker;
use super::state::State;

/// Devices a `print` may write to.
const DEVICES: &[&str] = &["/dev/stdout", "/dev/stderr", "/dev/null", "-"];

pub fn check(checker: &mut Checker, name: &str, args: &[Arg], state: &State) {
    let mut program: Option<&Arg> = None;
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(text) = arg.value.as_deref() else {
            if program.is_none() && files.is_empty() {
                return checker
                    .unclear(format!("the `{name}` program `{}` is not known before it runs", arg.shown));
            }
            continue;
        };
        let (option, attached) = split_option(text);
        match option {
            "--" => {
                if program.is_none() && files.is_empty() {
                    program = args.get(i);
                }
                break;
            }
            "-S" | "--sandbox" | "--version" | "--help" => return,
            // mawk's `-W version`, `-W interactive`…; `-W exec FILE` runs a program file.
            "-W" => {
                let value =
                    attached.or_else(|| args.get(i).and_then(|a| a.value.as_deref())).unwrap_or_default();
                i += usize::from(attached.is_none());
                match value {
                    "version" | "usage" => return,
                    _ if value.starts_with("exec") => {
                        return checker
                            .unclear(format!("`{name} -W exec` runs a program file wt does not follow"));
                    }
                    _ => {}
                }
            }
            "-F" | "-v" | "--field-separator" | "--assign" => i += usize::from(attached.is_none()),
            "-f" | "--file" | "-E" | "--exec" | "-i" | "--include" => {
                let file = match attached {
                    Some(value) => Some(Arg { value: Some(value.to_owned()), ..arg.clone() }),
                    None => args.get(i).cloned(),
                };
                i += usize::from(attached.is_none());
                files.extend(file);
            }
            "-e" | "--source" => {
                let source = match attached {
                    Some(value) => Some(value.to_owned()),
                    None => args.get(i).and_then(|a| a.value.clone()),
                };
                i += usize::from(attached.is_none());
                match source {
                    Some(source) => program_acts(checker, name, &source),
                    None => checker.unclear(format!("the `{name}` program is not known before it runs")),
                }
                files.push(Arg::literal(""));
            }
            _ if text.starts_with('-') && text != "-" => {
                return checker.unclear(format!(
                    "`{name} {text}` is an option wt does not know (gawk's -d, -o and -p write files, -l loads code)"
                ));
            }
            _ if program.is_none() && files.is_empty() => program = Some(arg),
            _ => {}
        }
    }
    for file in files.iter().filter(|f| !f.text().is_empty()) {
        if !checker.inside(file.exact(), state) {
            checker.unclear(format!(
                "`{name} -f {}` runs a program outside the worktree, which wt does not follow",
                file.shown
            ));
        }
    }
    if let Some(text) = program.and_then(|p| p.value.as_deref()) {
        program_acts(checker, name, text);
    }
}

/// `-F:` → (`-F`, `:`); `--assign=x=1` → (`--assign`, `x=1`); `-v` → (`-v`, none).
fn split_option(text: &str) -> (&str, Option<&str>) {
    if let Some((name, value)) = text.split_once('=').filter(|_| text.starts_with("--")) {
        return (name, Some(value));
    }
    if text.len() > 2 && text.starts_with('-') && !text.starts_with("--") {
        return (&text[..2], Some(&text[2..]));
    }
    (text, None)
}

fn program_acts(checker: &mut Checker, name: &str, program: &str) {
    if let Some(what) = acts(program) {
        checker.unclear(format!(
            "the `{name}` program {what}, which wt does not follow; print to standard output and redirect it"
        ));
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Text(String),
    Op(&'static str),
    Other(char),
    Newline,
}

/// What in `program` writes or runs something, if anything.
fn acts(program: &str) -> Option<&'static str> {
    let tokens = tokens(program);
    for (i, token) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1);
        match token {
            Token::Word(word) if word == "system" && next == Some(&Token::Other('(')) => {
                return Some("calls system()");
            }
            Token::Op("|" | "|&") => return Some("pipes to or from a command"),
            Token::Word(word) if word == "getline" => {
                let after = if matches!(next, Some(Token::Word(_))) { tokens.get(i + 2) } else { next };
                if after == Some(&Token::Other('<')) {
                    return Some("reads a file with getline <");
                }
            }
            Token::Other('@') if matches!(next, Some(Token::Word(w)) if w == "load" || w == "include") => {
                return Some("loads code with @load or @include");
            }
            Token::Word(word)
                if (word == "print" || word == "printf") && prints_into_a_file(&tokens[i + 1..]) =>
            {
                return Some("prints into a file");
            }
            _ => {}
        }
    }
    None
}

/// Whether a `print` statement (the tokens after `print`) ends with `> target` or `>> target`
/// outside parentheses, to something other than standard output or error.
fn prints_into_a_file(statement: &[Token]) -> bool {
    let mut depth = 0usize;
    for (i, token) in statement.iter().enumerate() {
        match token {
            Token::Other('(') => depth += 1,
            Token::Other(')') => depth = depth.saturating_sub(1),
            Token::Other(';' | '}' | '{') | Token::Newline => return false,
            Token::Other('>') | Token::Op(">>") if depth == 0 => {
                return !matches!(statement.get(i + 1), Some(Token::Text(t)) if DEVICES.contains(&t.as_str()));
            }
            _ => {}
        }
    }
    false
}

/// The program as tokens: strings, words, operators; comments and regular expressions dropped
/// (a `/` where an operand is expected starts a regular expression, elsewhere it divides).
fn tokens(program: &str) -> Vec<Token> {
    const OPERATORS: &[&str] = &[
        "||", "&&", "|&", ">>", "<=", ">=", "==", "!=", "!~", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=",
    ];
    let chars: Vec<char> = program.chars().collect();
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let operand_expected = match out.last() {
            None | Some(Token::Newline | Token::Op(_)) => true,
            Some(Token::Other(c)) => !matches!(c, ')' | ']' | '$'),
            Some(Token::Word(w)) => matches!(w.as_str(), "print" | "printf" | "return" | "in"),
            Some(Token::Text(_)) => false,
        };
        match c {
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\n' => {
                out.push(Token::Newline);
                i += 1;
            }
            _ if c.is_whitespace() => i += 1,
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '"' => {
                let mut text = String::new();
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    text.extend(chars.get(i));
                    i += 1;
                }
                out.push(Token::Text(text));
                i += 1;
            }
            '/' if operand_expected => {
                i += 1;
                let mut class = false;
                while i < chars.len() && (class || chars[i] != '/') && chars[i] != '\n' {
                    match chars[i] {
                        '\\' => i += 1,
                        '[' => class = true,
                        ']' => class = false,
                        _ => {}
                    }
                    i += 1;
                }
                out.push(Token::Text(String::new()));
                i += 1;
            }
            _ if c.is_alphanumeric() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                    i += 1;
                }
                out.push(Token::Word(chars[start..i].iter().collect()));
            }
            _ => {
                let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
                match OPERATORS.iter().find(|op| **op == two) {
                    Some(op) => {
                        out.push(Token::Op(op));
                        i += 2;
                    }
                    None if c == '|' => {
                        out.push(Token::Op("|"));
                        i += 1;
                    }
                    None => {
                        out.push(Token::Other(c));
                        i += 1;
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::acts;

    #[test]
    fn programs_that_write_or_run_are_found_and_the_rest_are_not() {
        for program in [
            "BEGIN{print \"x\" > \"/tmp/f\"}",
            "{ print $1 >> out }",
            "{ printf \"%s\", $0 > $2 \".txt\" }",
            "BEGIN { system(\"git push\") }",
            "{ print | \"sh\" }",
            "BEGIN { while ((\"ls\" | getline line) > 0) print line }",
            "BEGIN { getline x < \"/etc/passwd\" }",
            "@load \"filefuncs\"",
            "{ if ($1) print > \"f\" }",
            "BEGIN { \"date\" |& getline }",
        ] {
            assert!(acts(program).is_some(), "{program}");
        }
        for program in [
            "{ print $1 }",
            "$3 > 100 { print $1 }",
            "{ s += $2 } END { print s / NR }",
            "/a|b/ { print }",
            "$1 == 1 || $2 == 2",
            "{ print ($1 > $2) }",
            "{ print \"error\" > \"/dev/stderr\" }",
            "{ print \"a > b\", $0 }",
            "# print > x\n{ print }",
            "$0 ~ /x>y/ { n++ } END { print n }",
            "{ print a / b > \"/dev/stdout\" }",
        ] {
            assert_eq!(acts(program), None, "{program}");
        }
    }
}
