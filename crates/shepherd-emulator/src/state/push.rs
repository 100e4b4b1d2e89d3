//! A push to a pull request's head: threads follow their lines or become
//! outdated, and the diff and commits are refreshed.

use std::collections::BTreeMap;

use super::records::{DiffVersionRecord, PushOutcome};
use super::store::State;
use crate::git::{self, Hunk};
use crate::ids;
use crate::scenario::Side;

impl State {
    /// A push moved PR `number`'s head: threads on the head side follow
    /// their lines through `push_diff` (old head to new head) or become
    /// outdated when those lines changed; the PR's diff and commits are
    /// refreshed.
    pub(crate) fn apply_push(
        &mut self,
        number: u64,
        new_sha: &str,
        push_diff: &BTreeMap<String, Vec<Hunk>>,
        pr_diff: BTreeMap<String, Vec<Hunk>>,
        commits: Vec<String>,
    ) -> PushOutcome {
        let mut outcome = PushOutcome::default();
        let Ok(p) = self.pr_index(number) else {
            return outcome;
        };
        let version_id = self.next_id();
        let now = ids::iso8601(self.clock);
        let pr = self.pr_mut(p);
        let version = DiffVersionRecord {
            database_id: version_id,
            head_sha: new_sha.to_owned(),
            base_sha: pr.base_sha.clone(),
            created_at: now,
            files: pr_diff.len(),
        };
        pr.versions.push(version);
        for thread in &mut pr.threads {
            if thread.outdated || thread.side == Side::Left {
                continue;
            }
            let Some(line) = thread.current_line else {
                // A file-level thread is outdated by any change to its file.
                if push_diff.contains_key(&thread.path) {
                    thread.outdated = true;
                    outcome.outdated.push(thread.database_id);
                }
                continue;
            };
            let start = thread.current_start_line.unwrap_or(line);
            match git::remap_range(push_diff.get(&thread.path).map(Vec::as_slice), start, line) {
                Ok((new_start, new_line)) => {
                    if new_line != line {
                        outcome.moved.push(thread.database_id);
                    }
                    thread.current_line = Some(new_line);
                    thread.current_start_line = thread.current_start_line.map(|_| new_start);
                    thread.commit = new_sha.to_owned();
                }
                Err(()) => {
                    thread.outdated = true;
                    outcome.outdated.push(thread.database_id);
                }
            }
        }
        pr.diff = pr_diff;
        outcome.new_commits = commits.iter().filter(|c| !pr.commits.contains(c)).count();
        pr.commits = commits;
        outcome
    }
}
