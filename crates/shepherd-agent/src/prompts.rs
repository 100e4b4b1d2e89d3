//! Prompts: Markdown templates embedded as defaults and overridable per
//! repository (`.shepherd/prompts/<name>.md`), rendered from tasks.
//!
//! A template holds `{{placeholder}}`s, substituted in a single pass: text
//! inserted for one placeholder is never scanned again, so a comment body that
//! contains `{{items}}` stays text. Unknown placeholders are errors naming the
//! prompt and the placeholder; so is a template missing a required one.
//!
//! Untrusted text (comment bodies, the PR title) is fenced in
//! `<untrusted-comment …>` / `<untrusted-title>` elements. A body cannot close
//! or open such a fence: every `<` that starts something that reads as an
//! `untrusted…` tag (any case, any spacing, with or without `/`) is written as
//! `&lt;`. Items are given as ids, paths and lines, never file contents: the
//! agent reads the code itself.

use std::path::{Path, PathBuf};

use shepherd_core::config::AgentRole;

use crate::answer::ThreadOutcome;
use crate::task::{
    ApplyReviewTask, CiFailureContext, FixTask, FixValidationTask, HeldFinding, ItemKind,
    PrContext, ReviewTask, SuggestionState, TaskItem, TriageTask,
};

const TRIAGE: &str = include_str!("../prompts/triage.md");
const FIX: &str = include_str!("../prompts/fix.md");
const CLUSTER_FIX: &str = include_str!("../prompts/cluster-fix.md");
const FIX_VALIDATION: &str = include_str!("../prompts/fix-validation.md");
const REVIEW: &str = include_str!("../prompts/review.md");
const APPLY_REVIEW: &str = include_str!("../prompts/apply-review.md");
const CI_FIX: &str = include_str!("../prompts/ci-fix.md");

/// The most characters of a diff a prompt shows; the rest is cut, and the
/// agent is told how to read it itself.
pub const MAX_PROMPT_DIFF: usize = 100_000;

/// Which prompt: the roles of [`AgentRole`] that have one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptName {
    /// `triage.md`.
    Triage,
    /// `fix.md`.
    Fix,
    /// `cluster-fix.md`.
    ClusterFix,
    /// `fix-validation.md`.
    FixValidation,
    /// `review.md`.
    Review,
    /// `apply-review.md`.
    ApplyReview,
    /// `ci-fix.md`: a fix task whose item is a failing CI check (issue
    /// 31), asked of the fix role's agent.
    CiFix,
}

impl PromptName {
    /// Every prompt.
    pub const ALL: [PromptName; 7] = [
        PromptName::Triage,
        PromptName::Fix,
        PromptName::ClusterFix,
        PromptName::FixValidation,
        PromptName::Review,
        PromptName::ApplyReview,
        PromptName::CiFix,
    ];

    /// The file stem: the role's name (`cluster-fix`), or `ci-fix`.
    pub fn as_str(self) -> &'static str {
        match self {
            PromptName::CiFix => "ci-fix",
            _ => self.role().as_str(),
        }
    }

    /// The role this prompt is for.
    pub fn role(self) -> AgentRole {
        match self {
            PromptName::Triage => AgentRole::Triage,
            PromptName::Fix => AgentRole::Fix,
            PromptName::ClusterFix => AgentRole::ClusterFix,
            PromptName::FixValidation => AgentRole::FixValidation,
            PromptName::Review => AgentRole::Review,
            PromptName::ApplyReview => AgentRole::ApplyReview,
            PromptName::CiFix => AgentRole::Fix,
        }
    }

    /// The prompt of `role`; `None` for a role without one
    /// (`report-narrative`, not built yet).
    pub fn of_role(role: AgentRole) -> Option<PromptName> {
        PromptName::ALL.into_iter().find(|p| p.role() == role)
    }

    fn default_template(self) -> &'static str {
        match self {
            PromptName::Triage => TRIAGE,
            PromptName::Fix => FIX,
            PromptName::ClusterFix => CLUSTER_FIX,
            PromptName::FixValidation => FIX_VALIDATION,
            PromptName::Review => REVIEW,
            PromptName::ApplyReview => APPLY_REVIEW,
            PromptName::CiFix => CI_FIX,
        }
    }

    /// The placeholders the template may use.
    pub fn placeholders(self) -> &'static [&'static str] {
        match self {
            PromptName::Triage => &["pr", "worktree", "items", "answer_schema"],
            PromptName::Fix | PromptName::CiFix => {
                &["pr", "worktree", "items", "files_hint", "answer_schema"]
            }
            PromptName::ClusterFix => &[
                "pr",
                "worktree",
                "items",
                "files_hint",
                "cluster_brief",
                "answer_schema",
            ],
            PromptName::FixValidation => &[
                "pr",
                "worktree",
                "items",
                "claimed",
                "commit",
                "diff",
                "answer_schema",
            ],
            PromptName::Review => &[
                "pr",
                "worktree",
                "base",
                "head",
                "commits",
                "files",
                "diff",
                "answer_schema",
            ],
            PromptName::ApplyReview => &["pr", "worktree", "findings", "answer_schema"],
        }
    }

    /// The placeholders the template must use.
    pub fn required(self) -> &'static [&'static str] {
        match self {
            PromptName::Triage | PromptName::Fix | PromptName::CiFix => &["items"],
            PromptName::ClusterFix => &["items", "cluster_brief"],
            PromptName::FixValidation => &["items", "diff"],
            PromptName::Review => &["base", "head"],
            PromptName::ApplyReview => &["findings"],
        }
    }
}

impl std::fmt::Display for PromptName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a prompt could not be loaded or rendered.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// An override file could not be read.
    #[error("reading prompt {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A template uses a placeholder that prompt does not have.
    #[error("prompt {name} ({origin}): unknown placeholder {{{{{placeholder}}}}}; known: {known}")]
    UnknownPlaceholder {
        /// The prompt.
        name: PromptName,
        /// `built-in` or the override's path.
        origin: String,
        /// The placeholder.
        placeholder: String,
        /// The placeholders it may use.
        known: String,
    },
    /// A template lacks a placeholder the prompt needs.
    #[error("prompt {name} ({origin}): missing required placeholder {{{{{placeholder}}}}}")]
    MissingPlaceholder {
        /// The prompt.
        name: PromptName,
        /// `built-in` or the override's path.
        origin: String,
        /// The placeholder.
        placeholder: &'static str,
    },
}

/// A template and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Template {
    text: String,
    origin: String,
}

/// The set of prompt templates in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    triage: Template,
    fix: Template,
    cluster_fix: Template,
    fix_validation: Template,
    review: Template,
    apply_review: Template,
    ci_fix: Template,
}

impl Default for Prompts {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Prompts {
    /// The embedded defaults.
    pub fn builtin() -> Self {
        let t = |name: PromptName| Template {
            text: name.default_template().to_owned(),
            origin: "built-in".to_owned(),
        };
        Prompts {
            triage: t(PromptName::Triage),
            fix: t(PromptName::Fix),
            cluster_fix: t(PromptName::ClusterFix),
            fix_validation: t(PromptName::FixValidation),
            review: t(PromptName::Review),
            apply_review: t(PromptName::ApplyReview),
            ci_fix: t(PromptName::CiFix),
        }
    }

    /// The defaults, overridden by `<repo_root>/.shepherd/prompts/<name>.md`
    /// where such a file exists. Overrides are checked for placeholders.
    pub fn load(repo_root: &Path) -> Result<Self, PromptError> {
        Self::with_overrides(&repo_root.join(".shepherd").join("prompts"))
    }

    /// The defaults, overridden by `<dir>/<name>.md` where such a file exists.
    pub fn with_overrides(dir: &Path) -> Result<Self, PromptError> {
        let mut prompts = Self::builtin();
        for name in PromptName::ALL {
            let path = dir.join(format!("{name}.md"));
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(PromptError::Io { path, source }),
            };
            let template = Template {
                text,
                origin: path.display().to_string(),
            };
            check_template(name, &template)?;
            tracing::debug!(prompt = %name, path = %path.display(), "using prompt override");
            *prompts.slot(name) = template;
        }
        Ok(prompts)
    }

    fn slot(&mut self, name: PromptName) -> &mut Template {
        match name {
            PromptName::Triage => &mut self.triage,
            PromptName::Fix => &mut self.fix,
            PromptName::ClusterFix => &mut self.cluster_fix,
            PromptName::FixValidation => &mut self.fix_validation,
            PromptName::Review => &mut self.review,
            PromptName::ApplyReview => &mut self.apply_review,
            PromptName::CiFix => &mut self.ci_fix,
        }
    }

    fn get(&self, name: PromptName) -> &Template {
        match name {
            PromptName::Triage => &self.triage,
            PromptName::Fix => &self.fix,
            PromptName::ClusterFix => &self.cluster_fix,
            PromptName::FixValidation => &self.fix_validation,
            PromptName::Review => &self.review,
            PromptName::ApplyReview => &self.apply_review,
            PromptName::CiFix => &self.ci_fix,
        }
    }

    /// Where prompt `name` comes from: `built-in` or the override's path.
    pub fn origin(&self, name: PromptName) -> &str {
        &self.get(name).origin
    }

    /// The triage prompt for `task`; `answer_schema` is the answer's JSON Schema.
    pub fn render_triage(
        &self,
        task: &TriageTask,
        answer_schema: &serde_json::Value,
    ) -> Result<String, PromptError> {
        let values = [
            ("pr", render_pr(&task.pr)),
            ("worktree", task.worktree.display().to_string()),
            ("items", render_items(&task.items)),
            ("answer_schema", pretty(answer_schema)),
        ];
        substitute(PromptName::Triage, self.get(PromptName::Triage), &values)
    }

    /// The fix or cluster-fix prompt for `task`.
    pub fn render_fix(
        &self,
        task: &FixTask,
        answer_schema: &serde_json::Value,
    ) -> Result<String, PromptError> {
        let name = if task.cluster.is_some() {
            PromptName::ClusterFix
        } else if task.items.iter().any(|i| i.kind == ItemKind::CiFailure) {
            PromptName::CiFix
        } else {
            PromptName::Fix
        };
        let files_hint = if task.files_hint.is_empty() {
            "(none given)".to_owned()
        } else {
            task.files_hint
                .iter()
                .map(|f| format!("- {}", quoted(f)))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let brief = task
            .cluster
            .as_ref()
            .map(|c| c.brief.trim_end().to_owned())
            .unwrap_or_default();
        let values = [
            ("pr", render_pr(&task.pr)),
            ("worktree", task.worktree.display().to_string()),
            ("items", render_items(&task.items)),
            ("files_hint", files_hint),
            ("cluster_brief", brief),
            ("answer_schema", pretty(answer_schema)),
        ];
        substitute(name, self.get(name), &values)
    }

    /// The fix-validation prompt for `task`.
    pub fn render_fix_validation(
        &self,
        task: &FixValidationTask,
        answer_schema: &serde_json::Value,
    ) -> Result<String, PromptError> {
        let commit = match &task.commit {
            Some(sha) => quoted(sha),
            None => "(not committed yet; the diff is against the code before the fix)".to_owned(),
        };
        let values = [
            ("pr", render_pr(&task.pr)),
            ("worktree", task.worktree.display().to_string()),
            ("items", render_items(&task.items)),
            ("claimed", render_claims(&task.claimed)),
            ("commit", commit),
            ("diff", render_diff(&task.diff, "git show <the fix commit>")),
            ("answer_schema", pretty(answer_schema)),
        ];
        substitute(
            PromptName::FixValidation,
            self.get(PromptName::FixValidation),
            &values,
        )
    }

    /// The review prompt for `task`.
    pub fn render_review(
        &self,
        task: &ReviewTask,
        answer_schema: &serde_json::Value,
    ) -> Result<String, PromptError> {
        let commits = if task.commits.is_empty() {
            "(none listed)".to_owned()
        } else {
            task.commits
                .iter()
                .map(|c| {
                    format!(
                        "- {} <untrusted-commit>{}</untrusted-commit>",
                        quoted(&c.sha),
                        fence_body(&c.subject).replace(['\n', '\r'], " ")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let range = format!("git diff {}..{}", task.base_sha, task.head_sha);
        let values = [
            ("pr", render_pr(&task.pr)),
            ("worktree", task.worktree.display().to_string()),
            ("base", short_sha(&task.base_sha)),
            ("head", short_sha(&task.head_sha)),
            ("commits", commits),
            ("files", render_paths(&task.files)),
            ("diff", render_diff(&task.diff, &range)),
            ("answer_schema", pretty(answer_schema)),
        ];
        substitute(PromptName::Review, self.get(PromptName::Review), &values)
    }

    /// The apply-review prompt for `task`.
    pub fn render_apply_review(
        &self,
        task: &ApplyReviewTask,
        answer_schema: &serde_json::Value,
    ) -> Result<String, PromptError> {
        let values = [
            ("pr", render_pr(&task.pr)),
            ("worktree", task.worktree.display().to_string()),
            ("findings", render_findings(&task.findings)),
            ("answer_schema", pretty(answer_schema)),
        ];
        substitute(
            PromptName::ApplyReview,
            self.get(PromptName::ApplyReview),
            &values,
        )
    }
}

/// A SHA as it may appear in a command line: hex digits only (anything
/// else is quoted, so it cannot be read as a shell word or an option).
fn short_sha(sha: &str) -> String {
    if !sha.is_empty() && sha.chars().all(|c| c.is_ascii_hexdigit()) {
        sha.to_owned()
    } else {
        quoted(sha)
    }
}

fn render_paths(paths: &[String]) -> String {
    if paths.is_empty() {
        "(none listed)".to_owned()
    } else {
        paths
            .iter()
            .map(|f| format!("- {}", quoted(f)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A diff fenced as untrusted data, cut at [`MAX_PROMPT_DIFF`] characters
/// with a note naming `full` (the command that shows all of it).
fn render_diff(diff: &str, full: &str) -> String {
    if diff.trim().is_empty() {
        return "(empty diff: nothing changed)".to_owned();
    }
    let total = diff.chars().count();
    let (shown, note) = if total > MAX_PROMPT_DIFF {
        let cut: String = diff.chars().take(MAX_PROMPT_DIFF).collect();
        (
            cut,
            format!(
                "\n(The diff is cut after {MAX_PROMPT_DIFF} of its {total} characters; run `{full}` to read the rest.)"
            ),
        )
    } else {
        (diff.to_owned(), String::new())
    };
    let mut body = fence_body(&shown);
    if !body.ends_with('\n') {
        body.push('\n');
    }
    format!("<untrusted-diff>\n{body}</untrusted-diff>{note}")
}

fn render_claims(claims: &[ThreadOutcome]) -> String {
    if claims.is_empty() {
        return "(no claims: Shepherd applied suggestion blocks itself, or the fixer said nothing)"
            .to_owned();
    }
    claims
        .iter()
        .map(|c| {
            let files: Vec<String> = c.files.iter().map(|f| quoted(f)).collect();
            format!(
                "- id {}: status {}, files [{}]\n  <untrusted-claim>{}</untrusted-claim>",
                quoted(&c.id),
                serde_json::to_value(c.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                files.join(", "),
                fence_body(&c.summary).replace(['\n', '\r'], " "),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn render_findings(findings: &[HeldFinding]) -> String {
    if findings.is_empty() {
        return "(no findings)".to_owned();
    }
    let total = findings.len();
    findings
        .iter()
        .enumerate()
        .map(|(i, held)| {
            let f = &held.finding;
            let mut out = format!(
                "### Finding {} of {total}: id {}\n\n- severity: {}, confidence {}\n",
                i + 1,
                quoted(&f.id),
                f.severity,
                f.confidence,
            );
            match (&f.path, f.line) {
                (Some(p), Some(l)) => out.push_str(&format!("- file: {}, line {l}\n", quoted(p))),
                (Some(p), None) => out.push_str(&format!("- file: {}\n", quoted(p))),
                _ => out.push_str("- file: none given\n"),
            }
            out.push_str(&format!(
                "\n<untrusted-finding id=\"{}\">\ntitle: {}\n\n{}\n\nreproduction: {}\n</untrusted-finding>\n",
                attr(&f.id),
                fence_body(&f.title).replace(['\n', '\r'], " "),
                fence_body(f.explanation.trim_end()),
                fence_body(f.reproduction.as_deref().unwrap_or("(none)")).replace(['\n', '\r'], " "),
            ));
            let evidence = fence_body(held.evidence.trim_end());
            out.push_str(&format!(
                "<untrusted-evidence id=\"{}\">\n{}\n</untrusted-evidence>\n",
                attr(&f.id),
                evidence
            ));
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

/// The section appended to a prompt for the retry: the errors that made the
/// previous answer invalid.
pub fn retry_section(errors: &[String]) -> String {
    let mut out = String::from(
        "\n\n## Your previous answer was refused\n\n\
         It did not pass validation. Correct these problems and answer again with the \
         complete JSON object only:\n\n",
    );
    for e in errors {
        out.push_str("- ");
        out.push_str(&e.replace('\n', " "));
        out.push('\n');
    }
    out
}

fn pretty(value: &serde_json::Value) -> String {
    // A Value always serializes; the fallback only keeps this total.
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Checks `template`'s placeholders against what `name` allows and needs.
fn check_template(name: PromptName, template: &Template) -> Result<(), PromptError> {
    let found = placeholders_in(&template.text);
    for placeholder in &found {
        if !name.placeholders().contains(&placeholder.as_str()) {
            return Err(PromptError::UnknownPlaceholder {
                name,
                origin: template.origin.clone(),
                placeholder: placeholder.clone(),
                known: name.placeholders().join(", "),
            });
        }
    }
    for placeholder in name.required() {
        if !found.iter().any(|p| p == placeholder) {
            return Err(PromptError::MissingPlaceholder {
                name,
                origin: template.origin.clone(),
                placeholder,
            });
        }
    }
    Ok(())
}

/// Every `{{name}}` of a template, in order.
fn placeholders_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                found.push(after[..end].trim().to_owned());
                rest = &after[end + 2..];
            }
            None => break,
        }
    }
    found
}

/// Substitutes `values` into `template` in one pass.
fn substitute(
    name: PromptName,
    template: &Template,
    values: &[(&str, String)],
) -> Result<String, PromptError> {
    check_template(name, template)?;
    let text = &template.text;
    let mut out = String::with_capacity(text.len() * 2);
    let mut rest = text.as_str();
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let key = after[..end].trim();
        // check_template guaranteed every key is known and has a value.
        if let Some((_, value)) = values.iter().find(|(k, _)| *k == key) {
            out.push_str(value);
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

// ---------------------------------------------------------------------------
// Rendering tasks

/// A value as a JSON string literal: quoted, with control characters escaped,
/// so a path or id cannot break the line it is on.
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

fn render_pr(pr: &PrContext) -> String {
    format!(
        "- number: {} ({})\n- url: {}\n- head: {}\n- base: {}\n- title: <untrusted-title>{}</untrusted-title>",
        pr.number,
        pr.forge,
        quoted(&pr.url),
        quoted(&pr.head_sha),
        quoted(&pr.base_ref),
        fence_body(&pr.title),
    )
}

fn render_items(items: &[TaskItem]) -> String {
    if items.is_empty() {
        return "(no items)".to_owned();
    }
    let total = items.len();
    items
        .iter()
        .enumerate()
        .map(|(i, item)| render_item(i + 1, total, item))
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

fn render_item(n: usize, total: usize, item: &TaskItem) -> String {
    let mut out = format!("### Item {n} of {total}: id {}\n\n", quoted(&item.id));
    let kind = match item.kind {
        ItemKind::ReviewThread => "review thread (can be fixed, replied to and resolved)",
        ItemKind::IssueComment => "top-level comment on the pull request (no file)",
        ItemKind::ReviewBody => "review summary (no file)",
        ItemKind::CiFailure => {
            "failing CI check (fixed by a commit; nothing is replied or resolved)"
        }
    };
    out.push_str(&format!("- kind: {kind}\n"));
    if let Some(ci) = &item.ci {
        out.push_str(&render_ci_failure(ci));
        return out;
    }
    if let Some(path) = &item.path {
        let lines = match (item.start_line, item.line) {
            (Some(s), Some(e)) if s != e => format!(", lines {s}-{e}"),
            (_, Some(e)) => format!(", line {e}"),
            _ => ", the whole file".to_owned(),
        };
        out.push_str(&format!("- file: {}{lines}\n", quoted(path)));
    }
    if item.outdated {
        out.push_str("- outdated: yes (the lines changed since the comment was written)\n");
    }
    let author = match &item.author {
        Some(login) => format!(
            "{} ({})",
            quoted(login),
            if item.author_is_bot { "bot" } else { "person" }
        ),
        None => "a deleted account".to_owned(),
    };
    out.push_str(&format!("- opened by: {author}\n"));
    let suggestion = match &item.suggestion {
        SuggestionState::Absent => "none".to_owned(),
        SuggestionState::Applicable { edit } => {
            // GitLab's `suggestion:-N+M` reaches beyond the commented lines.
            let (start, end) = edit
                .effective_range()
                .unwrap_or((edit.site.start_line, edit.site.end_line));
            format!(
                "yes, replacing lines {start}-{end} of {}",
                quoted(&edit.site.path)
            )
        }
        SuggestionState::Refused { reason } => {
            format!(
                "present but not applicable as written ({})",
                reason.replace('\n', " ")
            )
        }
    };
    out.push_str(&format!("- suggestion block: {suggestion}\n"));
    if let Some(note) = &item.triage {
        out.push_str(&format!(
            "- triage reasoning: {}\n- reply hint: {}\n",
            fence_body(&note.reasoning).replace('\n', " "),
            fence_body(&note.reply_hint).replace('\n', " ")
        ));
    }
    out.push('\n');
    for comment in &item.comments {
        out.push_str(&format!(
            "<untrusted-comment id=\"{}\" author=\"{}\" bot=\"{}\" shepherd=\"{}\">\n",
            attr(&comment.id),
            attr(comment.author.as_deref().unwrap_or("ghost")),
            yes_no(comment.author_is_bot),
            yes_no(comment.from_shepherd),
        ));
        let body = fence_body(&comment.body);
        out.push_str(&body);
        if !body.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("</untrusted-comment>\n");
    }
    out
}

/// A failing check of a CI fix task: its name and class, then its log
/// excerpt and Shepherd's diff, each fenced as untrusted text (a log and
/// a diff carry what anyone could write on the PR).
fn render_ci_failure(ci: &CiFailureContext) -> String {
    let mut out = format!(
        "- check: {}\n- failed on: {}\n- before Shepherd's commits ({}): {}\n\n",
        quoted(&ci.check),
        quoted(&ci.sha),
        quoted(&ci.before_sha),
        ci.before
    );
    let fenced = |tag: &str, attrs: String, text: &str| {
        let body = fence_body(text);
        let newline = if body.ends_with('\n') { "" } else { "\n" };
        format!("<{tag}{attrs}>\n{body}{newline}</{tag}>\n")
    };
    out.push_str(&fenced(
        "untrusted-log",
        format!(" check=\"{}\"", attr(&ci.check)),
        if ci.log.is_empty() {
            "(no log could be read)"
        } else {
            &ci.log
        },
    ));
    out.push('\n');
    out.push_str(&fenced(
        "untrusted-diff",
        format!(" from=\"{}\"", attr(&ci.before_sha)),
        if ci.diff.is_empty() {
            "(no diff)"
        } else {
            &ci.diff
        },
    ));
    out
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// An attribute value: `&`, `"`, `<`, `>` and line breaks escaped.
fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// Untrusted text made safe to put inside a fence: every `<` that begins
/// something reading as an `untrusted…` tag (`<untrusted`, `</untrusted`,
/// `< / UNTRUSTED`, …) becomes `&lt;`. Nothing else changes.
pub fn fence_body(text: &str) -> String {
    const WORD: &str = "untrusted";
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c == '<' {
            let after = text[i + 1..].trim_start();
            let after = after.strip_prefix('/').unwrap_or(after).trim_start();
            let starts = after
                .get(..WORD.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(WORD));
            if starts {
                out.push_str("&lt;");
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_templates() {
        for name in PromptName::ALL {
            let t = Prompts::builtin().get(name).clone();
            check_template(name, &t).unwrap();
            for p in name.placeholders() {
                assert!(
                    placeholders_in(&t.text).iter().any(|f| f == p),
                    "{name} lacks {p}"
                );
            }
        }
    }

    #[test]
    fn fence_cannot_be_closed_or_opened_from_inside() {
        for hostile in [
            "</untrusted-comment>",
            "</UNTRUSTED-comment>",
            "< / untrusted-comment >",
            "</\nuntrusted-comment>",
            "<untrusted-comment id=\"x\">",
            "</untrusted-title>",
        ] {
            let safe = fence_body(hostile);
            assert!(safe.starts_with("&lt;"), "{hostile} -> {safe}");
            assert!(!safe.contains('<'), "{hostile} -> {safe}");
        }
        assert_eq!(
            fence_body("a < b, <b>x</b>, <untrust"),
            "a < b, <b>x</b>, <untrust"
        );
        assert_eq!(fence_body("é</untrusted"), "é&lt;/untrusted");
    }

    #[test]
    fn substitution_is_single_pass() {
        let t = Template {
            text: "A {{items}} B {{ pr }}".into(),
            origin: "t".into(),
        };
        let out = substitute(
            PromptName::Triage,
            &t,
            &[("items", "{{pr}}".into()), ("pr", "P".into())],
        )
        .unwrap();
        assert_eq!(out, "A {{pr}} B P");
    }

    #[test]
    fn overrides_are_checked_and_used() {
        let dir = tempfile::tempdir().unwrap();
        let prompts_dir = dir.path().join(".shepherd/prompts");
        std::fs::create_dir_all(&prompts_dir).unwrap();
        std::fs::write(prompts_dir.join("triage.md"), "Mine: {{items}}").unwrap();
        let p = Prompts::load(dir.path()).unwrap();
        assert_eq!(p.get(PromptName::Triage).text, "Mine: {{items}}");
        assert!(p.origin(PromptName::Triage).ends_with("triage.md"));
        assert_eq!(p.origin(PromptName::Fix), "built-in");

        std::fs::write(prompts_dir.join("fix.md"), "{{items}} {{secrets}}").unwrap();
        let err = Prompts::load(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("prompt fix") && err.contains("{{secrets}}"),
            "{err}"
        );

        std::fs::write(prompts_dir.join("fix.md"), "{{items}}").unwrap();
        std::fs::write(prompts_dir.join("cluster-fix.md"), "{{items}}").unwrap();
        let err = Prompts::load(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("missing required placeholder {{cluster_brief}}"),
            "{err}"
        );
    }
}
