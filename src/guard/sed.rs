//! `sed`: it writes the files it edits in place (`-i`), and its script can write files (`w`,
//! `W`, the `w` flag of `s`) and run commands (`e`, the `e` flag of `s`). The script is read
//! command by command; anything the reader does not know makes the writes unclear.

use super::arg::Arg;
use super::checker::Checker;
use super::state::State;

/// What a sed script does besides printing.
#[derive(Debug, Default, PartialEq, Eq)]
struct Effects {
    /// Files the script writes (`w file`, `s/a/b/w file`).
    writes: Vec<String>,
    /// Commands it runs (`e command`); `None` for `e` alone or the `e` flag, which run the text.
    runs: Vec<Option<String>>,
    /// The script could not be read.
    unknown: Option<String>,
}

pub fn check(checker: &mut Checker, args: &[Arg], state: &State) {
    let Some(call) = read_args(args) else {
        checker.unclear("`sed` has an option wt does not know, so it cannot tell what sed writes".into());
        return;
    };
    let mut operands = call.operands;
    let mut scripts = call.scripts;
    if scripts.is_empty() && call.script_files.is_empty() && !operands.is_empty() {
        scripts.push(operands.remove(0));
    }
    if !call.script_files.is_empty() && !call.sandbox {
        checker.unclear("`sed -f` reads its script from a file wt does not follow".into());
    }
    for script in &scripts {
        let Some(text) = script.value.as_deref() else {
            checker.unclear(format!("the sed script `{}` is not known before it runs", script.shown));
            continue;
        };
        let effects = effects(text);
        if let Some(why) = effects.unknown {
            checker.unclear(format!("wt could not read the sed script ({why})"));
        }
        for file in effects.writes.iter().filter(|f| !matches!(f.as_str(), "/dev/stdout" | "/dev/stderr")) {
            checker.write_target("sed", &Arg::literal(file), state);
        }
        for command in effects.runs {
            match command {
                Some(command) => {
                    checker.nested(&command, state.clone());
                }
                None => checker.unclear("the sed script runs the text it edits as a command (`e`)".into()),
            }
        }
    }
    if call.in_place {
        for file in &operands {
            checker.write_target("sed -i", file, state);
        }
    }
}

struct Call {
    scripts: Vec<Arg>,
    script_files: Vec<Arg>,
    operands: Vec<Arg>,
    in_place: bool,
    sandbox: bool,
}

/// sed's options: `-i` takes an optional suffix attached to it, so the generic reader does not fit.
fn read_args(args: &[Arg]) -> Option<Call> {
    let mut call = Call {
        scripts: Vec::new(),
        script_files: Vec::new(),
        operands: Vec::new(),
        in_place: false,
        sandbox: false,
    };
    let mut options_done = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let next = args.get(i + 1).cloned();
        let text = arg.value.as_deref()?;
        if options_done || text == "-" || !text.starts_with('-') {
            call.operands.push(arg.clone());
        } else if text == "--" {
            options_done = true;
        } else if let Some(long) = text.strip_prefix("--") {
            let (name, value) =
                long.split_once('=').map_or((long, None), |(n, v)| (n, Some(Arg::literal(v))));
            let takes = |call: &mut Vec<Arg>, i: &mut usize| match value.clone() {
                Some(v) => call.push(v),
                None => {
                    call.extend(next.clone());
                    *i += 1;
                }
            };
            match name {
                "expression" => takes(&mut call.scripts, &mut i),
                "file" => takes(&mut call.script_files, &mut i),
                "line-length" => i += usize::from(value.is_none()),
                "in-place" => call.in_place = true,
                "sandbox" => call.sandbox = true,
                "quiet" | "silent" | "regexp-extended" | "separate" | "unbuffered" | "null-data"
                | "zero-terminated" | "posix" | "debug" | "follow-symlinks" | "binary" => {}
                _ => return None,
            }
        } else {
            for (at, c) in text[1..].char_indices() {
                let rest = &text[1 + at + 1..];
                let value = if rest.is_empty() { next.clone() } else { Some(Arg::literal(rest)) };
                match c {
                    'n' | 'r' | 'E' | 's' | 'u' | 'z' | 'b' => continue,
                    'i' => call.in_place = true,
                    'e' => call.scripts.extend(value),
                    'f' => call.script_files.extend(value),
                    'l' => {}
                    _ => return None,
                }
                i += usize::from(rest.is_empty() && c != 'i');
                break;
            }
        }
        i += 1;
    }
    Some(call)
}

/// Reads a GNU sed script command by command.
fn effects(script: &str) -> Effects {
    let chars: Vec<char> = script.chars().collect();
    let mut effects = Effects::default();
    let mut i = 0;
    while i < chars.len() {
        while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ';') {
            i += 1;
        }
        let Some(&first) = chars.get(i) else { break };
        if first == '#' {
            i = line_end(&chars, i);
            continue;
        }
        if let Err(why) = skip_address(&chars, &mut i) {
            effects.unknown = Some(why);
            return effects;
        }
        let Some(&command) = chars.get(i) else { break };
        i += 1;
        match command {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {
            }
            'q' | 'Q' | 'l' | 'L' | ':' | 'b' | 't' | 'T' | 'v' => i = word_end(&chars, i),
            'a' | 'i' | 'c' | 'r' | 'R' => i = text_end(&chars, i),
            'w' | 'W' => {
                let end = line_end(&chars, i);
                effects.writes.push(chars[i..end].iter().collect::<String>().trim().to_owned());
                i = end;
            }
            'e' => {
                let end = line_end(&chars, i);
                let command: String = chars[i..end].iter().collect::<String>().trim().to_owned();
                effects.runs.push(Some(command).filter(|c| !c.is_empty()));
                i = end;
            }
            's' | 'y' => {
                if let Err(why) = substitution(&chars, &mut i, command == 's', &mut effects) {
                    effects.unknown = Some(why);
                    return effects;
                }
            }
            other => {
                effects.unknown = Some(format!("the command `{other}`"));
                return effects;
            }
        }
    }
    effects
}

fn line_end(chars: &[char], from: usize) -> usize {
    chars[from..].iter().position(|&c| c == '\n').map_or(chars.len(), |n| from + n)
}

/// The end of a label or number argument: up to `;`, a newline or `}`.
fn word_end(chars: &[char], from: usize) -> usize {
    chars[from..].iter().position(|&c| matches!(c, ';' | '\n' | '}')).map_or(chars.len(), |n| from + n)
}

/// The end of `a text` / `r file`: the line, continued by a trailing backslash.
fn text_end(chars: &[char], mut from: usize) -> usize {
    loop {
        let end = line_end(chars, from);
        if end > from && chars[end - 1] == '\\' && end < chars.len() {
            from = end + 1;
        } else {
            return end;
        }
    }
}

/// Addresses: `12`, `$`, `/re/I`, `\%re%`, `first~step`, `0,/re/`, `addr,+N`, then `!`.
fn skip_address(chars: &[char], i: &mut usize) -> Result<(), String> {
    for part in 0..2 {
        match chars.get(*i) {
            Some(c) if c.is_ascii_digit() || *c == '$' || *c == '+' || *c == '~' => {
                *i += 1;
                while chars.get(*i).is_some_and(|c| c.is_ascii_digit() || *c == '~') {
                    *i += 1;
                }
            }
            Some('/') => {
                *i += 1;
                *i = delimited(chars, *i, '/')? + 1;
                while chars.get(*i).is_some_and(|c| matches!(c, 'I' | 'M')) {
                    *i += 1;
                }
            }
            Some('\\') => {
                let delimiter = *chars.get(*i + 1).ok_or("an address is not closed")?;
                *i = delimited(chars, *i + 2, delimiter)? + 1;
            }
            _ if part == 1 => return Err("an address range has no end".into()),
            _ => break,
        }
        if part == 0 && chars.get(*i) == Some(&',') {
            *i += 1;
            continue;
        }
        break;
    }
    while chars.get(*i).is_some_and(|c| c.is_whitespace() || *c == '!') {
        *i += 1;
    }
    Ok(())
}

/// The index of the closing `delimiter` of a regex starting at `from` (backslashes escape; a
/// bracket expression may hold the delimiter).
fn delimited(chars: &[char], from: usize, delimiter: char) -> Result<usize, String> {
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '[' => {
                i += 1;
                if chars.get(i) == Some(&'^') {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1;
                }
                while chars.get(i).is_some_and(|&c| c != ']') {
                    i += 1;
                }
            }
            c if c == delimiter => return Ok(i),
            _ => {}
        }
        i += 1;
    }
    Err(format!("a `{delimiter}` is not closed"))
}

/// `s/re/replacement/flags` or `y/src/dst/` after the command letter.
fn substitution(chars: &[char], i: &mut usize, flags: bool, effects: &mut Effects) -> Result<(), String> {
    let delimiter = *chars.get(*i).ok_or("`s` has no delimiter")?;
    *i = delimited(chars, *i + 1, delimiter)? + 1;
    // The replacement: only backslashes escape.
    while let Some(&c) = chars.get(*i) {
        *i += if c == '\\' { 2 } else { 1 };
        if c == delimiter {
            break;
        }
    }
    if !flags {
        return Ok(());
    }
    loop {
        match chars.get(*i) {
            Some('w') => {
                let end = line_end(chars, *i + 1);
                effects.writes.push(chars[*i + 1..end].iter().collect::<String>().trim().to_owned());
                *i = end;
                return Ok(());
            }
            Some('e') => {
                effects.runs.push(None);
                *i += 1;
            }
            Some(c) if c.is_ascii_digit() || matches!(c, 'g' | 'p' | 'i' | 'I' | 'm' | 'M') => *i += 1,
            _ => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_commands_hidden_in_scripts_are_found() {
        assert_eq!(effects("s/a/b/g").writes, Vec::<String>::new());
        assert_eq!(effects("s/a/b/w /tmp/out").writes, ["/tmp/out"]);
        assert_eq!(effects("1,5w /tmp/x").writes, ["/tmp/x"]);
        assert_eq!(effects("/re/!W /tmp/y\np").writes, ["/tmp/y"]);
        assert_eq!(effects("s/[/]/x/;w /tmp/z").writes, ["/tmp/z"]);
        assert_eq!(effects("1e git push").runs, [Some("git push".to_owned())]);
        assert_eq!(effects("s/.*/rm -rf x/e").runs, [None]);
        assert!(effects("s/a/b/;K").unknown.is_some());
        assert_eq!(effects("1,10p;$d;/x/{s/a/b/;p}").runs.len(), 0);
        assert_eq!(effects("a\\\nw /tmp/not-a-command").writes, Vec::<String>::new());
    }
}
