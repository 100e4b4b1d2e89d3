//! Reviewer bots' rules, compiled: which comment a rule posts on an added
//! line. Pure; `bots.rs` runs them after pushes.

use regex::Regex;

use crate::automation::{glob_matches, BotSpec};
use crate::git::AddedLine;

/// A bot rule with its pattern compiled.
pub(crate) struct CompiledBot {
    pub(crate) spec: BotSpec,
    regex: Regex,
}

impl CompiledBot {
    /// Compiles the rules of a validated scenario (an invalid pattern was
    /// refused by validation; such a rule is skipped here).
    pub(crate) fn compile(specs: &[BotSpec]) -> Vec<CompiledBot> {
        specs
            .iter()
            .filter_map(|spec| {
                let regex = Regex::new(&spec.pattern).ok()?;
                Some(CompiledBot {
                    spec: spec.clone(),
                    regex,
                })
            })
            .collect()
    }

    /// The comment this rule posts on `line`, if it matches.
    pub(crate) fn comment_for(&self, line: &AddedLine) -> Option<String> {
        if let Some(glob) = &self.spec.path {
            if !glob_matches(glob, &line.path) {
                return None;
            }
        }
        let found = self.regex.find(&line.text)?;
        Some(
            self.spec
                .body
                .replace("{path}", &line.path)
                .replace("{line}", &line.line.to_string())
                .replace("{match}", found.as_str())
                .replace("{text}", &line.text),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_in_path_line_match_and_text() {
        let mut spec = BotSpec::new("bot", r"TODO\S*", "{path}:{line} `{match}` in `{text}`");
        spec.path = Some("src/**".into());
        let bot = &CompiledBot::compile(&[spec])[0];
        let line = AddedLine {
            path: "src/a.sh".into(),
            line: 4,
            text: "# TODO: x".into(),
        };
        assert_eq!(
            bot.comment_for(&line).unwrap(),
            "src/a.sh:4 `TODO:` in `# TODO: x`"
        );
        let elsewhere = AddedLine {
            path: "README.md".into(),
            ..line.clone()
        };
        assert_eq!(bot.comment_for(&elsewhere), None);
        let clean = AddedLine {
            text: "echo ok".into(),
            ..line
        };
        assert_eq!(bot.comment_for(&clean), None);
    }
}
