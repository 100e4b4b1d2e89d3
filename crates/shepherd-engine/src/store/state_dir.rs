//! Where Shepherd keeps its state: the database and the run directories.

use std::path::{Path, PathBuf};

use super::error::{Result, StoreError};
use super::types::validate_run_id;

/// The environment variable that overrides the state directory.
pub const STATE_DIR_ENV: &str = "SHEPHERD_STATE_DIR";

/// The database file name inside the state directory.
pub const DB_FILE: &str = "state.db";

/// The state directory: `state.db` and `runs/<run-id>/` beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// Resolve the state directory, first match wins:
    /// `explicit` (`--state-dir`), `SHEPHERD_STATE_DIR`,
    /// `$XDG_STATE_HOME/shepherd` (absolute paths only, as the XDG spec
    /// says), `$HOME/.local/state/shepherd`. Empty variables count as unset.
    ///
    /// `env` reads a variable; pass `|k| std::env::var(k).ok()` in production.
    /// Nothing is created on disk.
    pub fn resolve(
        explicit: Option<PathBuf>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self> {
        let var = |k: &str| env(k).filter(|v| !v.is_empty());
        let root = if let Some(dir) = explicit {
            dir
        } else if let Some(dir) = var(STATE_DIR_ENV) {
            PathBuf::from(dir)
        } else if let Some(xdg) = var("XDG_STATE_HOME").filter(|v| Path::new(v).is_absolute()) {
            PathBuf::from(xdg).join("shepherd")
        } else if let Some(home) = var("HOME") {
            PathBuf::from(home).join(".local/state/shepherd")
        } else {
            return Err(StoreError::NoStateDir);
        };
        Ok(StateDir { root })
    }

    /// A state directory at exactly `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        StateDir { root: root.into() }
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/state.db`.
    pub fn db_path(&self) -> PathBuf {
        self.root.join(DB_FILE)
    }

    /// `<root>/runs`.
    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// `<root>/runs/<run-id>`; refuses ids unsafe as a directory name.
    pub fn run_dir(&self, run_id: &str) -> Result<PathBuf> {
        validate_run_id(run_id)?;
        Ok(self.runs_dir().join(run_id))
    }

    /// Create `<root>/runs/<run-id>` (and its parents) and return it.
    pub fn create_run_dir(&self, run_id: &str) -> Result<PathBuf> {
        let dir = self.run_dir(run_id)?;
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::CreateDir {
            path: dir.clone(),
            source,
        })?;
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn explicit_wins_over_everything() {
        let dir = StateDir::resolve(
            Some("/x/explicit".into()),
            env(&[
                (STATE_DIR_ENV, "/x/env"),
                ("XDG_STATE_HOME", "/x/xdg"),
                ("HOME", "/x/home"),
            ]),
        )
        .unwrap();
        assert_eq!(dir.root(), Path::new("/x/explicit"));
        assert_eq!(dir.db_path(), Path::new("/x/explicit/state.db"));
    }

    #[test]
    fn env_override_then_xdg_then_home() {
        let all = [
            (STATE_DIR_ENV, "/x/env"),
            ("XDG_STATE_HOME", "/x/xdg"),
            ("HOME", "/x/home"),
        ];
        assert_eq!(
            StateDir::resolve(None, env(&all)).unwrap().root(),
            Path::new("/x/env")
        );
        assert_eq!(
            StateDir::resolve(None, env(&all[1..])).unwrap().root(),
            Path::new("/x/xdg/shepherd")
        );
        assert_eq!(
            StateDir::resolve(None, env(&all[2..])).unwrap().root(),
            Path::new("/x/home/.local/state/shepherd")
        );
    }

    #[test]
    fn empty_and_relative_xdg_are_ignored() {
        let dir = StateDir::resolve(
            None,
            env(&[
                (STATE_DIR_ENV, ""),
                ("XDG_STATE_HOME", "relative/xdg"),
                ("HOME", "/h"),
            ]),
        )
        .unwrap();
        assert_eq!(dir.root(), Path::new("/h/.local/state/shepherd"));
    }

    #[test]
    fn nothing_set_is_an_error() {
        let err = StateDir::resolve(None, env(&[])).unwrap_err();
        assert!(matches!(err, StoreError::NoStateDir), "{err}");
    }

    #[test]
    fn run_dirs_live_beside_the_db_and_refuse_traversal() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::at(tmp.path());
        let run = dir.create_run_dir("20240501-42-abc").unwrap();
        assert!(run.is_dir());
        assert_eq!(run, tmp.path().join("runs/20240501-42-abc"));
        for bad in ["", "..", "../x", "a/b", ".hidden", "a b"] {
            assert!(
                matches!(dir.run_dir(bad), Err(StoreError::InvalidRunId { .. })),
                "{bad:?} accepted"
            );
        }
    }
}
