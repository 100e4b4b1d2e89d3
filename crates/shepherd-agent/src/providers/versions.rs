//! Which release of each agent CLI Shepherd was proven against (the pinned
//! version its end-to-end tests run, `crates/shepherd-model-server/clis/`),
//! and the range it supports: the same minor series. `shepherd doctor`
//! shows an installed CLI's version against it.

/// A release as `major.minor.patch`.
pub type Version = (u32, u32, u32);

/// What Shepherd knows of one CLI's releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The npm package the CLI is installed from.
    pub package: &'static str,
    /// The release the end-to-end tests run.
    pub tested: Version,
}

/// How an installed release compares with what was tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The tested minor series (`2.1.x` for a tested 2.1.332).
    Supported,
    /// Another release: it may work; nothing proves it.
    Untested,
}

impl Support {
    /// The supported range, as a person reads it (`2.1.x`).
    pub fn range(&self) -> String {
        format!("{}.{}.x", self.tested.0, self.tested.1)
    }

    /// How `version` fits.
    pub fn fit(&self, version: Version) -> Fit {
        if (version.0, version.1) == (self.tested.0, self.tested.1) {
            Fit::Supported
        } else {
            Fit::Untested
        }
    }
}

/// The first `N.N.N` in what a CLI prints for `--version`
/// (`2.1.332 (Claude Code)`, `codex-cli 0.171.0`, `GitHub Copilot CLI 1.0.102.`).
pub fn parse_version(text: &str) -> Option<Version> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|word| {
            let mut parts = word.trim_matches('.').split('.');
            let major = parts.next()?.parse().ok()?;
            let minor = parts.next()?.parse().ok()?;
            let patch = parts.next()?.parse().ok()?;
            Some((major, minor, patch))
        })
}
