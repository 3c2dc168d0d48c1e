use super::*;

/// Every simple command in the script, depth first, as words (`$X` for a variable, `~` for a
/// tilde, `$(…)` for a substitution), with `[isolated]` marking isolated items and `>t`/`<t`
/// for redirections.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(&parse(text).unwrap_or_else(|err| panic!("{text:?}: {err}")), &mut out);
    out
}

fn walk(script: &Script, out: &mut Vec<String>) {
    for item in &script.items {
        match &item.node {
            Node::Command(command) => {
                let mut words: Vec<String> =
                    command.assignments.iter().map(|(n, v)| format!("{n}={}", show(v))).collect();
                words.extend(command.words.iter().map(show));
                for redirect in &command.redirects {
                    let op = match redirect.kind {
                        RedirectKind::Write => ">",
                        RedirectKind::Read => "<",
                        RedirectKind::Heredoc => "<<",
                        RedirectKind::HereString => "<<<",
                        RedirectKind::Duplicate => ">&",
                    };
                    words.push(format!("{op}{}", show(&redirect.target)));
                }
                if item.isolated {
                    words.push("[isolated]".into());
                }
                out.push(words.join(" "));
                for word in command.words.iter().chain(command.redirects.iter().map(|r| &r.target)) {
                    for inner in word.substitutions() {
                        walk(inner, out);
                    }
                }
            }
            Node::Subshell(inner) => {
                out.push("(".into());
                walk(inner, out);
                out.push(")".into());
            }
            Node::Group(inner) => {
                out.push("{".into());
                walk(inner, out);
                out.push("}".into());
            }
        }
    }
}

fn show(word: &Word) -> String {
    word.segments
        .iter()
        .map(|segment| match segment {
            Segment::Literal(text) => text.clone(),
            Segment::Variable(name) => format!("${name}"),
            Segment::Substitution(_) => "$(…)".into(),
            Segment::Tilde(user) => format!("~{user}"),
        })
        .collect()
}

#[test]
fn lists_and_operators_split_commands() {
    assert_eq!(commands("cd x && git push; ls || true"), ["cd x", "git push", "ls", "true"]);
    assert_eq!(commands("a\nb\n\nc"), ["a", "b", "c"]);
    assert_eq!(commands("a | b |& c"), ["a [isolated]", "b [isolated]", "c [isolated]"]);
    assert_eq!(commands("sleep 1 & echo hi"), ["sleep 1 [isolated]", "echo hi"]);
}

#[test]
fn quotes_and_escapes_are_removed() {
    assert_eq!(commands(r#"echo 'a b' "c d" e\ f"#), ["echo a b c d e f"]);
    assert_eq!(commands(r#"echo "a\"b" 'it'\''s'"#), [r#"echo a"b it's"#]);
    assert_eq!(commands(r"echo $'a\tb'"), ["echo a\tb"]);
    assert_eq!(commands("echo a\\\nb"), ["echo ab"]);
}

#[test]
fn subshells_groups_and_substitutions_are_nested() {
    assert_eq!(commands("(cd /; rm x)"), ["(", "cd /", "rm x", ")"]);
    assert_eq!(commands("{ cd /; rm x; }"), ["{", "cd /", "rm x", "}"]);
    assert_eq!(commands("echo $(git push) `rm -rf /`"), ["echo $(…) $(…)", "git push", "rm -rf /"]);
    assert_eq!(commands(r#"echo "$(cd .. && ls)""#), ["echo $(…)", "cd ..", "ls"]);
    assert_eq!(commands("diff <(ls a) >(tee /x)"), ["diff $(…) $(…)", "ls a", "tee /x"]);
    assert_eq!(commands("echo $((1 + (2 * 3)))"), ["echo $((arithmetic))"]);
}

#[test]
fn variables_tilde_and_assignments_are_kept_apart() {
    assert_eq!(commands("X=/tmp Y=$HOME cmd $X ${Y}/z ~/a ~bob"), ["X=/tmp Y=$HOME cmd $X $Y/z ~/a ~bob"]);
    assert_eq!(commands("echo ${X:-/tmp}"), ["echo $X:-/tmp"]);
    assert_eq!(commands("a=1; echo a=1"), ["a=1", "echo a=1"]);
}

#[test]
fn redirections_are_recognized_with_their_targets() {
    assert_eq!(commands("echo x > out 2>>err &>all <in"), ["echo x >out >err >all <in"]);
    assert_eq!(commands("cmd 2>&1 >&- >&file"), ["cmd >&1 >&- >file"]);
    assert_eq!(commands("cat <<<'text' >/tmp/x"), ["cat <<<text >/tmp/x"]);
    assert_eq!(commands("(ls) > /tmp/out"), ["(", "ls", ">/tmp/out [isolated]", ")"]);
}

#[test]
fn heredoc_bodies_are_skipped_and_kept() {
    let text = "cat <<EOF > /tmp/x\nrm -rf /\nEOF\necho after";
    assert_eq!(commands(text), ["cat <<EOF >/tmp/x", "echo after"]);
    let script = parse("bash <<-'END'\n\tgit push\n\tEND\n").unwrap();
    let Node::Command(command) = &script.items[0].node else { panic!() };
    assert_eq!(command.redirects[0].body.as_deref(), Some("\tgit push\n"));
    assert_eq!(commands("cat <<A <<B\na\nA\nb\nB\nls"), ["cat <<A <<B", "ls"]);
}

#[test]
fn keywords_of_compound_commands_are_skipped() {
    assert_eq!(commands("if git push; then rm x; else ls; fi"), ["git push", "rm x", "ls"]);
    assert_eq!(commands("while true; do git fetch; done"), ["true", "git fetch"]);
    assert_eq!(commands("for f in a b; do rm $f; done"), ["for f in a b", "rm $f"]);
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
        "f() { rm x; }",
        "case x in a) rm y;; esac",
        "cat <<EOF\nno end",
        "echo >",
    ] {
        assert!(parse(text).is_err(), "{text:?} should not parse");
    }
    for text in ["(".repeat(10_000), "$(".repeat(10_000), "{ ".repeat(10_000)] {
        let text = text.as_str();
        assert!(parse(text).is_err(), "{text:?} should not parse");
    }
}
