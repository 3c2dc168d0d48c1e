//! Rules beyond the built-ins, from `.spectacular/guard.toml` in the main checkout and `[guard]`
//! in a plan: `always_deny`, `always_allow`, and profiles per branch type (`feat/…`, `docs/…`,
//! with `default` for the rest), each rule in Claude Code's permission syntax — `Bash(npm
//! publish:*)`, `Edit(docs/**)`, `Read` — with a reason. Built-in denials always stand: a rule
//! can only add restrictions, or allow what the built-ins leave undecided (reads).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::decision::Decision;
use super::paths::{Place, Worktree};
use super::shell::{self, Node, Script};
use crate::location::Location;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardConfig {
    /// `deny-outside`: Read, Glob and Grep outside the worktree are denied. Default: no decision.
    pub reads: Option<Reads>,
    /// `wt guard --detect` also guards the main checkout.
    #[serde(default)]
    pub guard_main: bool,
    #[serde(default)]
    pub always_deny: Vec<RuleEntry>,
    #[serde(default)]
    pub always_allow: Vec<RuleEntry>,
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    /// `wt sandbox`: whether Landlock is required, and more folders to allow writing.
    #[serde(default)]
    pub sandbox: super::SandboxConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reads {
    AllowOutside,
    DenyOutside,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    #[serde(default)]
    pub deny: Vec<RuleEntry>,
    #[serde(default)]
    pub ask: Vec<RuleEntry>,
    #[serde(default)]
    pub allow: Vec<RuleEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleEntry {
    /// With its place in the file it was read from, for the message when it does not parse.
    pub rule: toml::Spanned<String>,
    pub reason: Option<String>,
}

/// A parsed rule: a tool name and what it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    tool: String,
    pattern: Option<String>,
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, String> {
        let text = text.trim();
        let (tool, pattern) = match text.split_once('(') {
            Some((tool, rest)) => match rest.strip_suffix(')') {
                Some(pattern) => (tool, Some(pattern.to_owned())),
                None => {
                    return Err(format!(
                        "rule `{text}` has no closing `)`; write it like `Bash(npm publish:*)`"
                    ));
                }
            },
            None => (text, None),
        };
        if tool.is_empty() || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "rule `{text}` does not start with a tool name; write it like `Edit(docs/**)`"
            ));
        }
        Ok(Rule { tool: tool.to_owned(), pattern })
    }
}

impl GuardConfig {
    pub fn load_toml(path: &Path) -> Result<Option<GuardConfig>, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
        };
        let at = |offset: usize| Location::at(path, &text, offset);
        let config: GuardConfig = toml::from_str(&text).map_err(|err| {
            let place = at(err.span().map_or(0, |span| span.start));
            format!("{place}: {}", err.message().trim())
        })?;
        config.validate().map_err(|(offset, err)| format!("{}: {err}", at(offset)))?;
        Ok(Some(config))
    }

    /// Every rule parses; the first that does not, as the byte offset where it was written (in
    /// the file it was read from) and the problem.
    pub fn validate(&self) -> Result<(), (usize, String)> {
        let profiles = self.profiles.values().flat_map(|p| p.deny.iter().chain(&p.ask).chain(&p.allow));
        for entry in self.always_deny.iter().chain(&self.always_allow).chain(profiles) {
            Rule::parse(entry.rule.get_ref()).map_err(|err| (entry.rule.span().start, err))?;
        }
        Ok(())
    }

    /// `self` with `other`'s rules added (and its settings winning).
    pub fn merge(mut self, other: GuardConfig) -> GuardConfig {
        self.reads = other.reads.or(self.reads);
        self.guard_main |= other.guard_main;
        self.always_deny.extend(other.always_deny);
        self.always_allow.extend(other.always_allow);
        for (name, profile) in other.profiles {
            let entry = self.profiles.entry(name).or_default();
            entry.deny.extend(profile.deny);
            entry.ask.extend(profile.ask);
            entry.allow.extend(profile.allow);
        }
        self.sandbox = self.sandbox.merge(other.sandbox);
        self
    }

    /// The decision of these rules for one call (to be combined with the built-ins').
    pub fn decide(&self, call: &Call<'_>) -> Decision {
        let profile = call.branch.and_then(|b| b.split_once('/')).map(|(kind, _)| kind);
        let profile =
            profile.and_then(|kind| self.profiles.get(kind)).or_else(|| self.profiles.get("default"));
        let mut decision = self.reads_decision(call);
        let groups: [RuleGroup; 5] = [
            (&self.always_deny, Decision::Deny, "always_deny"),
            (profile.map_or(&[], |p| p.deny.as_slice()), Decision::Deny, "the branch profile"),
            (profile.map_or(&[], |p| p.ask.as_slice()), Decision::Ask, "the branch profile"),
            (profile.map_or(&[], |p| p.allow.as_slice()), Decision::Allow, "the branch profile"),
            (&self.always_allow, Decision::Allow, "always_allow"),
        ];
        for (entries, make, source) in groups {
            for entry in entries {
                if Rule::parse(entry.rule.get_ref()).is_ok_and(|rule| call.matches(&rule)) {
                    let reason = entry
                        .reason
                        .clone()
                        .unwrap_or_else(|| format!("{} ({source})", entry.rule.get_ref()));
                    decision =
                        decision.and(make(format!("{reason} [worktree {}]", call.wt.root().display())));
                }
            }
        }
        decision
    }

    fn reads_decision(&self, call: &Call<'_>) -> Decision {
        if self.reads != Some(Reads::DenyOutside) || !matches!(call.tool, "Read" | "Glob" | "Grep") {
            return Decision::None;
        }
        match call.path {
            Some(path) if matches!(call.wt.place(path, call.cwd), Place::Outside(_)) => {
                Decision::Deny(format!(
                    "reading outside the worktree {} is turned off for this project (guard.toml: reads)",
                    call.wt.root().display()
                ))
            }
            _ => Decision::None,
        }
    }
}

/// Rules, the decision they make, and where they come from (for the reason).
type RuleGroup<'a> = (&'a [RuleEntry], fn(String) -> Decision, &'static str);

/// One tool call, as rules see it.
pub struct Call<'a> {
    pub tool: &'a str,
    /// The file or search path (Write, Edit, Read, NotebookEdit, Glob, Grep).
    pub path: Option<&'a str>,
    pub command: Option<&'a str>,
    pub cwd: &'a Path,
    pub wt: &'a Worktree,
    pub branch: Option<&'a str>,
}

impl Call<'_> {
    fn matches(&self, rule: &Rule) -> bool {
        let tool_matches = match rule.tool.as_str() {
            "Edit" => matches!(self.tool, "Edit" | "MultiEdit" | "Write" | "NotebookEdit"),
            "Read" => matches!(self.tool, "Read" | "Glob" | "Grep"),
            other => other == self.tool,
        };
        if !tool_matches {
            return false;
        }
        let Some(pattern) = &rule.pattern else { return true };
        match (self.tool, self.command, self.path) {
            ("Bash", Some(command), _) => bash_matches(command, pattern),
            (_, _, Some(path)) => path_matches(self, path, pattern),
            _ => false,
        }
    }
}

/// `prefix:*` matches a simple command starting with `prefix`; otherwise the whole line or one
/// simple command must equal the pattern.
fn bash_matches(command: &str, pattern: &str) -> bool {
    let simple = simple_commands(command);
    match pattern.strip_suffix(":*") {
        Some(prefix) => simple.iter().any(|c| c == prefix || c.starts_with(&format!("{prefix} "))),
        None => command.trim() == pattern || simple.iter().any(|c| c == pattern),
    }
}

fn simple_commands(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(script) = shell::parse(command) {
        collect(&script, &mut out);
    }
    out
}

fn collect(script: &Script, out: &mut Vec<String>) {
    for item in &script.items {
        match &item.node {
            Node::Command(command) => {
                let words: Vec<String> =
                    command.words.iter().map(|w| w.literal().unwrap_or_default()).collect();
                out.push(words.join(" "));
                for word in &command.words {
                    word.substitutions().for_each(|inner| collect(inner, out));
                }
            }
            Node::Subshell(inner) | Node::Group(inner) => collect(inner, out),
        }
    }
}

/// Glob patterns relative to the worktree root (`docs/**`, `*.md`, `/src/**`); `//abs/**` is
/// an absolute path.
fn path_matches(call: &Call<'_>, path: &str, pattern: &str) -> bool {
    let real = super::paths::real_path(&super::paths::lexical(&call.cwd.join(path)));
    let (base, pattern) = match pattern.strip_prefix("//") {
        Some(absolute) => (Path::new("/").to_owned(), absolute),
        None => (call.wt.root().to_owned(), pattern.trim_start_matches('/')),
    };
    let Ok(relative) = real.strip_prefix(&base) else { return false };
    let relative = relative.to_string_lossy();
    if pattern.contains('/') {
        glob(pattern, &relative)
    } else {
        // A pattern without a slash matches a file name at any depth, as in .gitignore.
        relative.rsplit('/').next().is_some_and(|name| glob(pattern, name))
    }
}

/// `*` within a path segment, `**` across segments, `?` one character.
fn glob(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p {
            [] => t.is_empty(),
            [b'*', b'*', rest @ ..] => {
                let rest = rest.strip_prefix(b"/").unwrap_or(rest);
                (0..=t.len()).any(|i| (i == 0 || t[i - 1] == b'/' || rest.is_empty()) && go(rest, &t[i..]))
            }
            [b'*', rest @ ..] => {
                (0..=t.len()).take_while(|&i| i == 0 || t[i - 1] != b'/').any(|i| go(rest, &t[i..]))
            }
            [b'?', rest @ ..] => t.first().is_some_and(|&c| c != b'/') && go(rest, &t[1..]),
            [c, rest @ ..] => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("docs/**", "docs/a/b.md"));
        assert!(glob("docs/**", "docs/x"));
        assert!(!glob("docs/**", "src/docs/x"));
        assert!(glob("**/*.md", "a/b/c.md"));
        assert!(glob("**/*.md", "c.md"));
        assert!(glob("src/*.rs", "src/lib.rs"));
        assert!(!glob("src/*.rs", "src/a/lib.rs"));
        assert!(glob("?.txt", "a.txt"));
    }

    #[test]
    fn rules_parse_or_say_how_to_write_them() {
        assert_eq!(
            Rule::parse("Bash(npm publish:*)").unwrap(),
            Rule { tool: "Bash".into(), pattern: Some("npm publish:*".into()) }
        );
        assert_eq!(Rule::parse("Read").unwrap(), Rule { tool: "Read".into(), pattern: None });
        assert!(Rule::parse("Bash(npm").unwrap_err().contains("closing"));
        assert!(Rule::parse("(x)").unwrap_err().contains("tool name"));
    }

    #[test]
    fn bash_prefix_rules_match_simple_commands_anywhere_in_the_line() {
        assert!(bash_matches("cd x && npm publish --tag next", "npm publish:*"));
        assert!(bash_matches("echo $(npm publish)", "npm publish:*"));
        assert!(!bash_matches("npm publisher", "npm publish:*"));
        assert!(bash_matches("make", "make"));
    }
}
