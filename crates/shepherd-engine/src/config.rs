//! The configuration a run was started with (`config-layers.json`), and the
//! configuration in effect computed from it (`config.toml`).
//!
//! SPEC section 10: safety settings come from the user's side: the user's
//! config, the environment, flags, and the repository file of the user's own
//! checkout, or (in CI, or without a checkout of the repository) the file as
//! it is on the PR's *base* branch. The file on the PR's head is untrusted
//! and may only tighten them ([`HeadConfig`]).
//!
//! The layers of the user's side are recorded before the run's first stage,
//! so that a resumed run uses exactly those, whatever stage the run stopped
//! in and whatever the environment of the resuming process. The base
//! branch's and the head's files are read once, in the first round's
//! worktree stage, and recorded in the same file.

use serde::{Deserialize, Serialize};
use shepherd_core::config::{Config, ConfigError, ConfigLayer, HeadConfig, LayerRecord};

/// Where the trusted repository file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepoConfigSource {
    /// The user's checkout: its file, if it has one, is among the run's
    /// layers already.
    Checkout,
    /// The PR's base branch, read in the first round (CI, or no checkout of
    /// the repository).
    #[default]
    BaseBranch,
}

/// A repository file read from the forge's copy of the repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum RepoFile {
    /// Not read yet (the first worktree stage reads it).
    Pending,
    /// Not read: the trusted file comes from the user's checkout.
    NotUsed,
    /// Read: the branch has no config file.
    Absent {
        /// The commit it was read at.
        commit: String,
    },
    /// Read.
    Read {
        /// The commit it was read at.
        commit: String,
        /// Its text, as a layer.
        layer: LayerRecord,
    },
}

impl RepoFile {
    /// Whether it still has to be read.
    pub fn is_pending(&self) -> bool {
        matches!(self, RepoFile::Pending)
    }

    fn layer(&self) -> Option<&LayerRecord> {
        match self {
            RepoFile::Read { layer, .. } => Some(layer),
            _ => None,
        }
    }
}

/// `config-layers.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigRecord {
    /// Format version.
    pub version: u32,
    /// The layers of the user's side, lowest first (the checkout's file,
    /// the user's file, the environment, the flags).
    pub layers: Vec<LayerRecord>,
    /// The base branch's file.
    pub base_branch: RepoFile,
    /// The PR head's file.
    pub pr_head: RepoFile,
}

/// The configuration in effect, and what was ignored on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    /// The configuration.
    pub config: Config,
    /// What the PR head's file asked for and did not get.
    pub notes: Vec<String>,
    /// The files read, in the order applied.
    pub files: Vec<String>,
}

impl ConfigRecord {
    /// The current format.
    pub const VERSION: u32 = 1;

    /// The record of a run about to start.
    pub fn new(layers: &[ConfigLayer], repo: RepoConfigSource) -> Result<Self, ConfigError> {
        Ok(ConfigRecord {
            version: Self::VERSION,
            layers: layers
                .iter()
                .map(LayerRecord::of)
                .collect::<Result<_, _>>()?,
            base_branch: match repo {
                RepoConfigSource::Checkout => RepoFile::NotUsed,
                RepoConfigSource::BaseBranch => RepoFile::Pending,
            },
            pr_head: RepoFile::Pending,
        })
    }

    /// Whether a repository file still has to be read.
    pub fn is_pending(&self) -> bool {
        self.base_branch.is_pending() || self.pr_head.is_pending()
    }

    /// The configuration in effect: the head file's tuning keys lowest, then
    /// the base branch's file, then the user's side; then the head file's
    /// safety settings where they tighten. Files not read yet count as absent.
    pub fn effective(&self) -> Result<Effective, ConfigError> {
        let head = match &self.pr_head {
            RepoFile::Read { layer, .. } => match &layer.source {
                shepherd_core::config::SourceRecord::PrHead(path) => {
                    Some(HeadConfig::parse(path.clone(), &layer.toml)?)
                }
                _ => None,
            },
            _ => None,
        };
        let mut layers = Vec::new();
        if let Some(head) = &head {
            layers.push(head.tuning_layer());
        }
        layers.extend(self.base_branch.layer().map(LayerRecord::to_layer));
        layers.extend(self.layers.iter().map(LayerRecord::to_layer));
        let files = layers
            .iter()
            .filter_map(|l| match &l.source {
                shepherd_core::config::Source::Env | shepherd_core::config::Source::Flags => None,
                source => Some(source.to_string()),
            })
            .collect();
        let mut config = Config::layered(&layers)?;
        let notes = match &head {
            Some(head) => head.tighten(&mut config),
            None => Vec::new(),
        };
        Ok(Effective {
            config,
            notes,
            files,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use shepherd_core::config::SourceRecord;

    fn head(text: &str) -> RepoFile {
        RepoFile::Read {
            commit: "h".into(),
            layer: LayerRecord {
                source: SourceRecord::PrHead("shepherd.toml".into()),
                toml: text.into(),
            },
        }
    }

    #[test]
    fn the_head_file_only_tightens_and_the_users_side_wins() {
        let user = ConfigLayer::user("u.toml", "[resolve]\nhuman_threads = false\n");
        let mut record = ConfigRecord::new(&[user], RepoConfigSource::BaseBranch).unwrap();
        assert!(record.is_pending());
        record.base_branch = RepoFile::Read {
            commit: "b".into(),
            layer: LayerRecord {
                source: SourceRecord::Repo("shepherd.toml (base branch main)".into()),
                toml: "[paths]\nprotected = [\"deploy/**\"]\n".into(),
            },
        };
        record.pr_head = head(
            "[paths]\nprotected = []\n[resolve]\nhuman_threads = true\n[ci]\ntimeout_secs = 42\n",
        );
        assert!(!record.is_pending());
        let eff = record.effective().unwrap();
        assert!(eff.config.paths.is_protected("deploy/x"));
        assert!(!eff.config.resolve.human_threads);
        assert_eq!(eff.config.ci.timeout_secs, 42);
        assert_eq!(eff.notes.len(), 2, "{:?}", eff.notes);
        assert_eq!(
            eff.files,
            [
                "shepherd.toml on the pull request's head",
                "shepherd.toml (base branch main)",
                "u.toml"
            ]
        );
    }
}
