//! Where `cd` goes, in every place the working directory may be: through `CDPATH`, logically
//! (bash's default: `..` folded on `$PWD`, then the result opened) and physically (`cd -P`, and
//! bash's fallback when the logical path does not open). Every result must be inside the
//! worktree.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::checker::Checker;
use super::paths::{lexical, resolve};
use super::state::{Cwd, Dir, State};

/// The directories after `cd path`: `Err(Some(p))` when one of them, `p`, is outside the
/// worktree; `Err(None)` when wt cannot tell where it goes.
pub fn change(checker: &Checker, path: &str, state: &State, physical: bool) -> Result<Cwd, Option<PathBuf>> {
    let start = match state.cwd.dirs() {
        Some(dirs) => dirs.to_vec(),
        None if path.starts_with('/') => vec![Dir { logical: "/".into(), physical: "/".into() }],
        None => return Err(None),
    };
    let mut out: Vec<Dir> = Vec::new();
    for dir in &start {
        let path = cdpath(checker, path, dir, state)?;
        for candidate in candidates(&path, dir, physical, &state.links) {
            if !checker.wt.contains(&candidate.physical) {
                return Err(Some(candidate.physical));
            }
            if !out.contains(&candidate) {
                out.push(candidate);
            }
        }
    }
    Ok(if out.len() > 4 { Cwd::Unknown } else { Cwd::Known(Rc::new(out)) })
}

fn candidates(path: &str, dir: &Dir, physical: bool, links: &[(PathBuf, PathBuf)]) -> Vec<Dir> {
    let real = resolve(Path::new(path), &dir.physical, links);
    if physical {
        return vec![Dir { logical: real.clone(), physical: real }];
    }
    let logical = lexical(&dir.logical.join(path));
    let through = resolve(&logical, Path::new("/"), links);
    let mut out = vec![Dir { logical, physical: through.clone() }];
    if real != through {
        out.push(Dir { logical: real.clone(), physical: real });
    }
    out
}

/// `cd name` with `CDPATH` set goes to the first `entry/name` that is a directory.
fn cdpath(checker: &Checker, path: &str, dir: &Dir, state: &State) -> Result<String, Option<PathBuf>> {
    let relative_to_cwd = path.starts_with('/')
        || path == "."
        || path == ".."
        || path.starts_with("./")
        || path.starts_with("../");
    if relative_to_cwd {
        return Ok(path.to_owned());
    }
    let Some(list) = checker.variable("CDPATH", state) else { return Err(None) };
    if list.is_empty() {
        return Ok(path.to_owned());
    }
    for entry in list.split(':') {
        let candidate = if entry.is_empty() { format!("./{path}") } else { format!("{entry}/{path}") };
        if resolve(Path::new(&candidate), &dir.physical, &state.links).is_dir() {
            return Ok(candidate);
        }
    }
    Ok(path.to_owned())
}
