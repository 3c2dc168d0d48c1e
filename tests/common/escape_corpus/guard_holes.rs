//! The second red team's holes in the Bash policy, each written as a class of cases: paths
//! through a descriptor the command opened on a folder (G1), hard links to files outside (G2),
//! "read-only" commands that write or run programs (G3), code the guard did not read (G4), and
//! servers outside the sandbox asked to run something (K9). With only the hook, whatever the
//! guard answers "understood" runs unsandboxed: each case here is denied, or — where wt cannot
//! know what it does — not understood. Ordinary work of the same kinds is in `ORDINARY`.
//!
//! Every case also runs for real under `wt sandbox` (`tests/sandbox_corpus.rs`), so each is
//! written to be harmless on a developer's machine as well: servers are out of reach in the
//! test's environment, processes signalled do not exist, the clock is set to a date that does
//! not parse.

use super::ClassCase;
use super::Expect::{self, *};

pub const GUARD_HOLES: &[ClassCase] = &[
    // G1: `/dev/fd/N/…` is a path inside the folder open on N, not a device.
    ("G1: fd opened on a folder outside", Deny, "echo pwned 5</tmp > /dev/fd/5/pwned"),
    ("G1: fd opened on a folder outside", Deny, "rm -f /dev/fd/5/x 5</tmp"),
    ("G1: fd opened on a folder outside", Deny, "exec 5<$REPO; echo pwned >> /dev/fd/5/README.md"),
    (
        "G1: fd opened on a folder outside",
        Deny,
        "exec 5<$REPO/.git/hooks; printf '#!/bin/sh\\n' > /dev/fd/5/post-commit; chmod +x /dev/fd/5/post-commit",
    ),
    ("G1: fd opened on a folder outside", Deny, "{ echo pwned > /dev/fd/3/pwned; } 3< /tmp"),
    ("G1: fd opened on a folder outside", Deny, "exec 3< /tmp; cp src/lib.rs /dev/fd/3/cp"),
    ("G1: fd opened on a folder outside", Deny, "mkdir /dev/fd/5/d 5</tmp"),
    ("G1: fd opened on a folder outside", Deny, "touch /dev/fd/5/t 5</tmp"),
    ("G1: fd opened on a folder outside", Deny, "ln -s /etc/passwd /dev/fd/5/l 5</tmp"),
    ("G1: fd opened on a folder outside", Deny, "mv src/lib.rs /dev/fd/5/mv 5</tmp"),
    ("G1: fd opened on a folder outside", Deny, "exec 5</tmp; chmod 000 /dev/fd/5/x"),
    ("G1: fd copied from one opened outside", Deny, "exec 5</tmp; exec 6<&5; echo x > /dev/fd/6/y"),
    ("G1: stdin opened on a folder outside", Deny, "echo x < /tmp > /dev/stdin/y"),
    ("G1: a file outside reopened for writing", Deny, "echo x 5</tmp/x > /dev/fd/5"),
    ("G1: a file outside reopened for writing", Deny, "tee /dev/fd/4 4<$REPO/README.md < src/lib.rs"),
    ("G1: fd the command did not open", Unclear, "echo x > /dev/fd/5/x"),
    ("G1: fd opened on a path not known", Unclear, "exec 5<\"$DIR\"; echo x > /dev/fd/5/x"),
    // G2: a hard link is the file itself; one to a file outside makes it writable from inside.
    ("G2: ln", Deny, "ln /tmp/x hard && echo appended >> hard"),
    ("G2: ln", Deny, "ln -f $REPO/README.md readme"),
    ("G2: ln -t", Deny, "ln -t src /tmp/x"),
    ("G2: ln through a symlink out", Deny, "ln etc-link/passwd passwd"),
    ("G2: ln of the worktree's .git link", Deny, "ln .git git-link"),
    ("G2: link", Deny, "link /tmp/x l"),
    ("G2: cp -l", Deny, "cp -l /tmp/x cl && echo x >> cl"),
    ("G2: cp --link", Deny, "cp --link $REPO/README.md cl"),
    ("G2: cp -al", Deny, "cp -al $REPO mirror"),
    ("G2: rsync --link-dest", Deny, "rsync -a --link-dest=/tmp src/ backup/"),
    ("G2: rsync --link-dest", Deny, "rsync -a --link-dest=../../.. src/ backup/"),
    ("G2: cp -s, then a write through it", Deny, "cp -s /tmp/x cs; echo x >> cs"),
    ("G2: a source not known", Unclear, "ln \"$SRC\" h"),
    // G3: "read-only" commands that write a file they are given, or run a program.
    ("G3: uniq IN OUT", Deny, "uniq src/lib.rs /tmp/uniq"),
    ("G3: uniq IN OUT", Deny, "uniq -c src/lib.rs $REPO/README.md"),
    ("G3: xxd IN OUT", Deny, "xxd src/lib.rs /tmp/xxd"),
    ("G3: xxd IN OUT", Deny, "xxd -r -p src/lib.rs $REPO/README.md"),
    ("G3: tree -o", Deny, "tree -o /tmp/tree ."),
    ("G3: tree -R", Deny, "tree -R -H . /tmp"),
    ("G3: less -o", Deny, "less -o /tmp/lesslog src/lib.rs"),
    ("G3: less --log-file", Deny, "less --log-file=/tmp/lesslog src/lib.rs"),
    ("G3: less -o in a bundle", Deny, "less -SRo/tmp/lesslog src/lib.rs"),
    ("G3: history -w", Deny, "history -w /tmp/hist"),
    ("G3: history -a", Deny, "set -o history; history -a $REPO/hist"),
    ("G3: history -w to ~/.history", Deny, "set -o history; history -s x; history -w"),
    ("G3: iconv -o", Deny, "iconv -f utf-8 -t latin1 -o /tmp/i src/lib.rs"),
    ("G3: rg --pre", Unclear, "rg --pre ./s.sh TODO src"),
    ("G3: ag --pager", Unclear, "ag --pager 'sh -c x' TODO"),
    ("G3: less commands at start", Unclear, "less '+!touch x' src/lib.rs"),
    ("G3: LESSKEY", Unclear, "LESSKEY=/tmp/k less src/lib.rs"),
];
