//! `wt status --pool`, and the line `wt status` ends with: the pool of recycled worktrees.

use super::{CliError, exit};
use crate::engine::pool::PoolView;

/// `wt status --pool [--json]`.
pub fn show(pool: &PoolView, json: bool) -> Result<u8, CliError> {
    if json {
        println!("{}", super::to_json(pool)?);
        return Ok(exit::OK);
    }
    println!("{}", summary(pool));
    for worktree in &pool.worktrees {
        let age = crate::store::now().saturating_sub(worktree.parked_at);
        println!(
            "  {}  {}  was {}, parked {} ago",
            worktree.path.display(),
            super::human_size(worktree.bytes),
            worktree.origin,
            human_age(age)
        );
    }
    for problem in &pool.problems {
        println!("  note: {problem}");
    }
    if !pool.recycle {
        println!("  recycling is off for this repository (.spectacular/worktree.toml)");
    }
    Ok(exit::OK)
}

pub fn summary(pool: &PoolView) -> String {
    let room = pool.pool_size.map_or_else(|| "each run's max_parallel".to_owned(), |size| size.to_string());
    let mut line = format!(
        "pool of recycled worktrees: {} worktree(s), {} on disk, at most {room} ({})",
        pool.worktrees.len(),
        super::human_size(pool.bytes),
        pool.dir.display()
    );
    if !pool.worktrees.is_empty() {
        line.push_str("; `wt cleanup --pool` empties it");
    }
    if !pool.problems.is_empty() {
        line.push_str(&format!("; {} to finish (see `wt status --pool`)", pool.problems.len()));
    }
    line
}

fn human_age(seconds: u64) -> String {
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7200 => format!("{} min", seconds / 60),
        7200..172_800 => format!("{} h", seconds / 3600),
        _ => format!("{} days", seconds / 86_400),
    }
}
