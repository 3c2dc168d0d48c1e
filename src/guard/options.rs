//! GNU-style options of the commands the policy reads: `-abc` bundles, `-oFILE` and `-o FILE`,
//! `--long=value` and `--long value`, unambiguous abbreviations of long options (GNU accepts
//! `--target=` for `--target-directory=`), `--` ending options. An option the spec does not
//! know, or an argument wt cannot know (it might be an option), makes the parse "unknown".
//! Commands read without a spec (git, gh, git-spice) use the loose readers at the end:
//! `positionals` and `has`.

use super::arg::Arg;

#[derive(Debug, Clone, Copy, Default)]
pub struct Spec {
    /// Short options without a value.
    pub flags: &'static str,
    /// Short options that take a value.
    pub values: &'static str,
    /// Long options without a value, separated by spaces (an optional `=value` is accepted).
    pub long_flags: &'static str,
    /// Long options that take a value, separated by spaces.
    pub long_values: &'static str,
}

impl Spec {
    pub const fn new(
        flags: &'static str,
        values: &'static str,
        long_flags: &'static str,
        long_values: &'static str,
    ) -> Spec {
        Spec { flags, values, long_flags, long_values }
    }
}

#[derive(Debug, Default)]
pub struct Parsed {
    /// Options as the spec names them (`-t`, `--target-directory`), with their values.
    pub options: Vec<(String, Option<Arg>)>,
    pub operands: Vec<Arg>,
    /// Why the parse cannot be trusted, if it cannot.
    pub unknown: Option<String>,
    /// Where parsing stopped (with `stop_at_operand`: the first operand, e.g. a prefix's command).
    pub end: usize,
}

impl Parsed {
    pub fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|(name, _)| names.contains(&name.as_str()))
    }

    /// The values of the options named `names`.
    pub fn values(&self, names: &[&str]) -> Vec<Arg> {
        self.options
            .iter()
            .filter(|(name, _)| names.contains(&name.as_str()))
            .filter_map(|(_, v)| v.clone())
            .collect()
    }
}

/// Parses `args`; with `stop_at_operand`, stops at the first operand (what a prefix runs).
pub fn parse(args: &[Arg], spec: &Spec, stop_at_operand: bool) -> Parsed {
    let mut parsed = Parsed::default();
    let mut options_done = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.value.as_deref() else {
            if stop_at_operand {
                break;
            }
            parsed.unknown.get_or_insert_with(|| format!("`{}` is not known before it runs", arg.shown));
            parsed.operands.push(arg.clone());
            i += 1;
            continue;
        };
        if options_done || text == "-" || !text.starts_with('-') {
            if stop_at_operand {
                break;
            }
            parsed.operands.push(arg.clone());
        } else if text == "--" {
            options_done = true;
            if stop_at_operand {
                i += 1;
                break;
            }
        } else if let Some(long) = text.strip_prefix("--") {
            i += long_option(long, args, i, spec, &mut parsed);
        } else {
            i += short_options(&text[1..], args, i, spec, &mut parsed);
        }
        i += 1;
    }
    parsed.end = i.min(args.len());
    parsed
}

/// Reads `--name[=value]`; returns how many following arguments it took.
fn long_option(long: &str, args: &[Arg], i: usize, spec: &Spec, parsed: &mut Parsed) -> usize {
    let (name, inline) = match long.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (long, None),
    };
    let names = || spec.long_values.split_whitespace().chain(spec.long_flags.split_whitespace());
    let exact = names().find(|n| *n == name);
    let matching: Vec<&str> = names().filter(|n| n.starts_with(name)).collect();
    let Some(full) = exact.or(match matching.as_slice() {
        [one] => Some(*one),
        _ => None,
    }) else {
        parsed.unknown.get_or_insert_with(|| format!("`--{name}` is an option wt does not know"));
        return 0;
    };
    let key = format!("--{full}");
    if !spec.long_values.split_whitespace().any(|n| n == full) {
        let value = inline.map(Arg::literal);
        parsed.options.push((key, value));
        return 0;
    }
    match inline {
        Some(value) => {
            parsed.options.push((key, Some(Arg::literal(value))));
            0
        }
        None => {
            parsed.options.push((key, args.get(i + 1).cloned()));
            1
        }
    }
}

/// Reads a bundle of short options (`rf`, `fsSLo`, `tDIR`); returns how many following
/// arguments it took.
fn short_options(bundle: &str, args: &[Arg], i: usize, spec: &Spec, parsed: &mut Parsed) -> usize {
    for (at, c) in bundle.char_indices() {
        if spec.flags.contains(c) {
            parsed.options.push((format!("-{c}"), None));
        } else if spec.values.contains(c) {
            let rest = &bundle[at + c.len_utf8()..];
            if rest.is_empty() {
                parsed.options.push((format!("-{c}"), args.get(i + 1).cloned()));
                return 1;
            }
            parsed.options.push((format!("-{c}"), Some(Arg::literal(rest))));
            return 0;
        } else {
            parsed.unknown.get_or_insert_with(|| format!("`-{c}` is an option wt does not know"));
            return 0;
        }
    }
    0
}

/// Commands read without a spec (git, gh, git-spice): their words that are not options, up to
/// `--`.
pub fn positionals(args: &[Arg]) -> Vec<&Arg> {
    args.iter()
        .take_while(|a| !a.is("--"))
        .filter(|a| !a.text().starts_with('-') || a.is("-") || a.value.is_none())
        .collect()
}

/// Whether any of `flags` is given (`--flag=value` counts for long flags; a short flag also
/// inside a bundle such as `-fd`).
pub fn has(args: &[Arg], flags: &[&str]) -> bool {
    args.iter().take_while(|a| !a.is("--")).any(|a| {
        let text = a.text();
        flags.iter().any(|f| {
            text == *f
                || (f.starts_with("--") && text.starts_with(&format!("{f}=")))
                || (f.len() == 2
                    && !f.starts_with("--")
                    && text.starts_with('-')
                    && !text.starts_with("--")
                    && text[1..].contains(&f[1..]))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<Arg> {
        text.split(' ').map(Arg::literal).collect()
    }

    const CP: Spec = Spec {
        flags: "afrRv",
        values: "tS",
        long_flags: "force recursive",
        long_values: "target-directory suffix",
    };

    #[test]
    fn bundles_attached_values_and_abbreviations_are_read() {
        let p = parse(&args("-rf a -t/tmp b"), &CP, false);
        assert_eq!(p.values(&["-t"]), vec![Arg::literal("/tmp")]);
        assert_eq!(p.operands.len(), 2);
        let p = parse(&args("--target=/x a"), &CP, false);
        assert_eq!(p.values(&["--target-directory"]), vec![Arg::literal("/x")]);
        let p = parse(&args("-rt /y a"), &CP, false);
        assert_eq!(p.values(&["-t"]), vec![Arg::literal("/y")]);
        assert!(parse(&args("-Z a"), &CP, false).unknown.is_some());
        assert!(parse(&args("--bogus a"), &CP, false).unknown.is_some());
        let p = parse(&args("-- -t x"), &CP, false);
        assert_eq!(p.operands.len(), 2);
        let p = parse(&args("-v cmd -t x"), &CP, true);
        assert_eq!(p.end, 1);
    }
}
