//! Which release of each agent CLI Shepherd was proven against (the pinned
//! version its end-to-end tests run, `crates/shepherd-model-server/clis/`),
//! and the range it supports: the same minor series. `shepherd doctor`
//! shows an installed CLI's version against it.

use super::cli::CliProvider;

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

impl CliProvider {
    /// The tested release and the package of this CLI. Kept equal to the
    /// pinned `package.json` of the end-to-end tests (tested).
    pub fn support(self) -> Support {
        self.spec().support()
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_each_cli_prints() {
        let cases = [
            ("2.1.332 (Claude Code)\n", Some((2, 1, 332))),
            ("codex-cli 0.171.0\n", Some((0, 171, 0))),
            (
                "GitHub Copilot CLI 1.0.102. Run 'copilot update' to check for updates.",
                Some((1, 0, 102)),
            ),
            ("0.61.0\n", Some((0, 61, 0))),
            ("1.18.33\n", Some((1, 18, 33))),
            ("no version here 1.2", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_version(text), expected, "{text}");
        }
    }

    #[test]
    fn the_tested_minor_series_is_supported() {
        let s = CliProvider::Claude.support();
        assert_eq!(s.range(), "2.1.x");
        assert_eq!(s.fit((2, 1, 204)), Fit::Supported);
        assert_eq!(s.fit((2, 2, 0)), Fit::Untested);
    }

    /// The table above is the pinned `package.json` of the end-to-end tests.
    #[test]
    fn the_tested_versions_are_the_pinned_ones() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shepherd-model-server/clis/package.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        for cli in CliProvider::ALL {
            let s = cli.support();
            let pinned = json["dependencies"][s.package]
                .as_str()
                .unwrap_or_else(|| panic!("{} is not pinned in {path}", s.package));
            let (a, b, c) = s.tested;
            assert_eq!(pinned, format!("{a}.{b}.{c}"), "{}", cli.name());
        }
    }
}
