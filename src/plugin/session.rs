//! SessionStart: what the session should know — that wt is here, what is missing, and this
//! repository's runs that wait to be carried on.

use std::path::Path;

use crate::git::Repo;
use crate::spice::Spice;
use crate::store::{LiveState, StateLayout};

pub fn context(dir: &Path) -> String {
    let mut lines = vec![format!(
        "spectacular: wt {} is installed; run plans with /spectacular:execute <plan>.",
        env!("CARGO_PKG_VERSION")
    )];
    if let Err(err) = Spice::discover() {
        lines.push(format!("spectacular: {err}"));
    }
    let Ok(repo) = Repo::discover(dir) else { return lines.join("\n") };
    let layout = StateLayout::new(repo.common_dir());
    for manifest in layout.runs().readable {
        let state = LiveState::of(&layout, &manifest);
        if matches!(state, LiveState::Dispatched | LiveState::Interrupted | LiveState::Failed) {
            let id = &manifest.run_id;
            lines.push(format!(
                "spectacular: run {id} is {}; carry it on with /spectacular:execute {id} or remove it with \
                 /spectacular:cleanup {id}",
                state.as_str()
            ));
        }
    }
    lines.join("\n")
}
