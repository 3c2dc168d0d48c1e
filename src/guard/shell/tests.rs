use super::*;

/// Every simple command in the script, depth first, as words (`$X` for a variable, `~` for a
/// tilde, `$(…)` for a substitution), with `[isolated]` marking isolated items, `&&`/`||`/`|`
/// joins, and `>t`/`<t` for redirections; compound commands as `<shape>{ … }`.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(&parse(text).unwrap_or_else(|err| panic!("{text:?}: {err}")), &mut out);
    out
}

fn walk(script: &Script, out: &mut Vec<String>) {
    let shape = match &script.shape {
        Shape::List => None,
        Shape::If => Some("if".to_owned()),
        Shape::Loop { until } => Some(if *until { "until" } else { "while" }.to_owned()),
        Shape::For { name, .. } => Some(format!("for {name}")),
        Shape::ArithFor => Some("for((".into()),
        Shape::Arithmetic => Some("((".into()),
        Shape::Case { .. } => Some("case".into()),
        Shape::Function { name } => Some(format!("function {name}")),
        Shape::Redirected => Some("redirected".into()),
    };
    if let Some(shape) = &shape {
        out.push(format!("{shape}{{"));
    }
    for item in &script.items {
        let join = match item.join {
            Join::Seq => "",
            Join::And => "&& ",
            Join::Or => "|| ",
            Join::Pipe => "| ",
        };
        match &item.node {
            Node::Command(command) => {
                let mut words: Vec<String> = command
                    .assignments
                    .iter()
                    .map(|a| {
                        format!(
                            "{}={}",
                            a.name,
                            a.words.iter().map(Word::shown).collect::<Vec<_>>().join(",")
                        )
                    })
                    .collect();
                words.extend(command.words.iter().map(Word::shown));
                for redirect in &command.redirects {
                    let op = match redirect.kind {
                        RedirectKind::Write => ">",
                        RedirectKind::Read => "<",
                        RedirectKind::Heredoc => "<<",
                        RedirectKind::HereString => "<<<",
                        RedirectKind::Duplicate => ">&",
                    };
                    words.push(format!("{op}{}", redirect.target.shown()));
                }
                if item.isolated {
                    words.push("[isolated]".into());
                }
                out.push(format!("{join}{}", words.join(" ")));
                let all = command.words.iter().chain(command.assignments.iter().flat_map(|a| &a.words));
                for word in all
                    .chain(command.redirects.iter().flat_map(|r| std::iter::once(&r.target).chain(&r.body)))
                {
                    for inner in word.substitutions() {
                        walk(inner, out);
                    }
                }
            }
            Node::Subshell(inner) => {
                out.push(format!("{join}("));
                walk(inner, out);
                out.push(")".into());
            }
            Node::Group(inner) if inner.shape != Shape::List => walk(inner, out),
            Node::Group(inner) => {
                out.push(format!("{join}{{"));
                walk(inner, out);
                out.push("}".into());
            }
        }
    }
    if shape.is_some() {
        out.push("}".into());
    }
}

#[test]
fn lists_and_operators_split_commands() {
    assert_eq!(commands("cd x && git push; ls || true"), ["cd x", "&& git push", "ls", "|| true"]);
    assert_eq!(commands("a\nb\n\nc"), ["a", "b", "c"]);
    assert_eq!(commands("a | b |& c"), ["a [isolated]", "| b [isolated]", "| c [isolated]"]);
    assert_eq!(commands("sleep 1 & echo hi"), ["sleep 1 [isolated]", "echo hi"]);
    assert_eq!(commands("a &&\n  b"), ["a", "&& b"]);
}

#[test]
fn quotes_and_escapes_are_removed() {
    assert_eq!(commands(r#"echo 'a b' "c d" e\ f"#), ["echo a b c d e f"]);
    assert_eq!(commands(r#"echo "a\"b" 'it'\''s'"#), [r#"echo a"b it's"#]);
    assert_eq!(commands(r"echo $'a\tb'"), ["echo a\tb"]);
    assert_eq!(commands("echo a\\\nb"), ["echo ab"]);
}

#[test]
fn ansi_c_and_locale_quotes_decode_as_bash_does() {
    assert_eq!(commands(r"echo $'\x2ftmp\057x\u0041\cA'"), ["echo /tmp/xA\u{1}"]);
    assert_eq!(commands(r#"echo $"/tmp/x""#), ["echo /tmp/x"]);
    assert_eq!(commands(r#"echo "$'x'""#), ["echo $'x'"]);
}

#[test]
fn subshells_groups_and_substitutions_are_nested() {
    assert_eq!(commands("(cd /; rm x)"), ["(", "cd /", "rm x", ")"]);
    assert_eq!(commands("{ cd /; rm x; }"), ["{", "cd /", "rm x", "}"]);
    assert_eq!(commands("echo $(git push) `rm -rf /`"), ["echo $(…) $(…)", "git push", "rm -rf /"]);
    assert_eq!(commands(r#"echo "$(cd .. && ls)""#), ["echo $(…)", "cd ..", "&& ls"]);
    assert_eq!(commands("diff <(ls a) >(tee /x)"), ["diff <(…) <(…)", "ls a", "tee /x"]);
    assert_eq!(commands("{ echo a }; }"), ["{", "echo a }", "}"]);
}

#[test]
fn expansions_hold_the_commands_they_run() {
    assert_eq!(commands("echo ${X:-$(git push)}"), ["echo ${X…}", "git push"]);
    assert_eq!(commands(r#"echo "${X:-it's $(rm x)}""#), ["echo ${X…}", "rm x"]);
    assert_eq!(commands("echo $(( $(git push) + 1 ))"), ["echo $((…))", "git push"]);
    assert_eq!(commands("(( x = $(rm y) ))"), ["(({", "$((…))", "rm y", "}"]);
    assert_eq!(commands("echo ${a[$(rm z)]}"), ["echo ${a…}", "rm z"]);
    assert_eq!(commands("a=($(git push) b)"), ["a=$(…),b", "git push"]);
}

#[test]
fn variables_tilde_and_assignments_are_kept_apart() {
    assert_eq!(commands("X=/tmp Y=$HOME cmd $X ${Y}/z ~/a ~bob"), ["X=/tmp Y=$HOME cmd $X $Y/z ~/a ~bob"]);
    assert_eq!(commands("a=1; echo a=1"), ["a=1", "echo a=1"]);
    assert_eq!(commands("X=~/dir"), ["X=~/dir"]);
}

#[test]
fn redirections_are_recognized_with_their_targets() {
    assert_eq!(commands("echo x > out 2>>err &>all <in"), ["echo x >out >err >all <in"]);
    assert_eq!(commands("cmd 2>&1 >&- >&file"), ["cmd >&1 >&- >file"]);
    assert_eq!(commands("cat <<<'text' >/tmp/x"), ["cat <<<text >/tmp/x"]);
    assert_eq!(commands("(ls) > /tmp/out"), ["redirected{", "(", "ls", ")", ">/tmp/out [isolated]", "}"]);
}

#[test]
fn redirections_keep_the_descriptor_they_open() {
    let script = parse("cmd 5</tmp >out 2>&1 &>both <>rw 7<<<x 12>&5").unwrap();
    let Node::Command(command) = &script.items[0].node else { panic!() };
    let fds: Vec<(u32, bool)> = command.redirects.iter().map(|r| (r.fd, r.both_outputs)).collect();
    assert_eq!(fds, [(5, false), (1, false), (2, false), (1, true), (0, false), (7, false), (12, false)]);
}

#[test]
fn heredoc_bodies_are_skipped_and_kept() {
    let text = "cat <<EOF > /tmp/x\nrm -rf /\nEOF\necho after";
    assert_eq!(commands(text), ["cat <<EOF >/tmp/x", "echo after"]);
    let script = parse("bash <<-'END'\n\tgit push\n\tEND\n").unwrap();
    let Node::Command(command) = &script.items[0].node else { panic!() };
    assert_eq!(command.redirects[0].body.as_ref().and_then(Word::literal).as_deref(), Some("git push\n"));
    assert_eq!(commands("cat <<A <<B\na\nA\nb\nB\nls"), ["cat <<A <<B", "ls"]);
}

#[test]
fn an_unquoted_heredoc_runs_its_substitutions_and_claude_codes_commit_form_parses() {
    assert_eq!(commands("cat <<EOF\n$(git push)\nEOF"), ["cat <<EOF", "git push"]);
    assert_eq!(commands("cat <<'EOF'\n$(git push)\nEOF"), ["cat <<EOF"]);
    let commit = "git commit -m \"$(cat <<'EOF'\nfeat: x\n\nCo-Authored-By: C <c@x>\nEOF\n)\"";
    assert_eq!(commands(commit), ["git commit -m $(…)", "cat <<EOF"]);
    // The body starts after the line's end, not at a newline inside its quotes.
    assert_eq!(commands("cat <<EOF; echo \"a\nEOF\"\nbody\nEOF\nls"), ["cat <<EOF", "echo a\nEOF", "ls"]);
}

#[test]
fn compound_commands_keep_their_shape() {
    assert_eq!(
        commands("if git push; then rm x; else ls; fi"),
        ["if{", "{", "git push", "}", "{", "rm x", "}", "{", "ls", "}", "}"]
    );
    assert_eq!(
        commands("while true; do git fetch; done"),
        ["while{", "{", "true", "}", "{", "git fetch", "}", "}"]
    );
    assert_eq!(commands("for f in a b; do rm $f; done"), ["for f{", "a b", "{", "rm $f", "}", "}"]);
    assert_eq!(
        commands("case $x in a|b) rm y;; *) ls;& esac"),
        ["case{", "$x", "a b", "{", "rm y", "}", "*", "{", "ls", "}", "}"]
    );
    assert_eq!(commands("f() { rm x; }; f"), ["function f{", "{", "rm x", "}", "}", "f"]);
    assert_eq!(commands("for ((i=0; i<3; i++)); do echo $i; done")[0], "for(({");
    assert_eq!(commands("time ( ls )"), ["(", "ls", ")"]);
    assert_eq!(commands("[[ $a < $b && -f x ]]"), ["[[ $a < $b && -f x ]]"]);
    assert_eq!(
        commands("while read l; do echo $l; done < in"),
        ["redirected{", "while{", "{", "read l", "}", "{", "echo $l", "}", "}", "<in [isolated]", "}"]
    );
}

#[test]
fn coprocesses_and_declared_arrays_hold_their_commands() {
    assert_eq!(commands("coproc git push"), ["(", "git push [isolated]", ")"]);
    assert_eq!(commands("coproc NAME { git push; }"), ["(", "{", "git push", "}", ")"]);
    assert_eq!(commands("declare -a x=($(git push) b)"), ["declare -a x=${(array)…}", "git push"]);
}

#[test]
fn what_cannot_be_followed_is_an_error() {
    for text in [
        "echo 'unclosed",
        "echo \"unclosed",
        "echo $(unclosed",
        "echo `unclosed",
        "(unclosed",
        "{ unclosed",
        "echo )",
        "a &&",
        "| a",
        "cat <<EOF\nno end",
        "echo >",
        "if true; then ls",
        "echo @(a|b)",
    ] {
        assert!(parse(text).is_err(), "{text:?} should not parse");
    }
}

#[test]
fn deep_nesting_is_refused_as_a_limit() {
    for text in [
        "(".repeat(10_000),
        "$(".repeat(10_000),
        "{ ".repeat(10_000),
        "if ".repeat(10_000),
        "${X:-".repeat(10_000),
    ] {
        let err = parse(&text).unwrap_err();
        assert!(err.limit, "{}: {err}", &text[..10]);
    }
}

#[test]
fn the_complete_lines_before_an_error_are_located() {
    let err = parse("git push\nls\necho 'unclosed").unwrap_err();
    assert_eq!(err.complete, "git push\nls\n".len());
}
