//! The scenario's moving parts: CI checks (`[ci]`, `[[checks]]`), reviewer
//! bots (`[[bots]]`) and faults (`[[faults]]`, also set at run time).

use serde::{Deserialize, Serialize};

/// How the required-checks endpoints answer (`[ci] protection`, `rulesets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointAccess {
    /// The endpoint answers normally.
    #[default]
    Ok,
    /// 403, as for a token without admin rights.
    Forbidden,
    /// 404, as GitHub answers when it hides the resource.
    NotFound,
}

/// CI settings (`[ci]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CiSpec {
    /// Run the checks for the PR head when the emulator starts (and after a
    /// reset), so a fresh scenario has CI results. Default `true`.
    #[serde(default = "yes")]
    pub run_on_start: bool,
    /// How `GET …/branches/{b}/protection/required_status_checks` answers.
    #[serde(default)]
    pub protection: EndpointAccess,
    /// How `GET …/rules/branches/{b}` answers; the same as `protection`
    /// when omitted.
    #[serde(default)]
    pub rulesets: Option<EndpointAccess>,
    /// The workflow's name (`CI` by default).
    #[serde(default = "default_workflow")]
    pub workflow: String,
    /// Required contexts beyond the checks marked `required` (a required
    /// check that never reports, for instance).
    #[serde(default)]
    pub required_contexts: Vec<String>,
}

fn yes() -> bool {
    true
}

fn default_workflow() -> String {
    "CI".to_owned()
}

impl Default for CiSpec {
    fn default() -> Self {
        CiSpec {
            run_on_start: true,
            protection: EndpointAccess::Ok,
            rulesets: None,
            workflow: default_workflow(),
            required_contexts: Vec::new(),
        }
    }
}

/// A CI check (`[[checks]]`): one job of the workflow, one check run per
/// attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// The check's (and job's) name.
    pub name: String,
    /// Run with `sh -c` in a checkout of the commit; exit 0 is success.
    pub command: String,
    /// Whether branch protection, rulesets and `isRequired` require it.
    #[serde(default)]
    pub required: bool,
    /// Seconds before the command is killed (conclusion `timed_out`).
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// The first `flaky` runs for a commit fail, later ones run the command.
    #[serde(default)]
    pub flaky: u32,
    /// How long the check stays queued before it starts.
    #[serde(default)]
    pub delay_ms: u64,
    /// Also publish the result as a legacy commit status named after the check.
    #[serde(default)]
    pub status_context: bool,
}

fn default_timeout() -> u64 {
    600
}

impl CheckSpec {
    /// A non-required check without delay, flakiness or status.
    pub fn new(name: impl Into<String>, command: impl Into<String>) -> Self {
        CheckSpec {
            name: name.into(),
            command: command.into(),
            required: false,
            timeout_secs: default_timeout(),
            flaky: 0,
            delay_ms: 0,
            status_context: false,
        }
    }
}

/// A reviewer bot (`[[bots]]`): after a push to the PR head, it posts a
/// review thread on every added line matching `pattern`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotSpec {
    /// The bot's login: a `[[users]]` entry of kind `bot`.
    pub login: String,
    /// A regular expression over the text of each added line.
    pub pattern: String,
    /// A glob over paths (`*` within a directory, `**` across, `?`); every
    /// file when omitted.
    #[serde(default)]
    pub path: Option<String>,
    /// The comment's Markdown; `{path}`, `{line}`, `{match}` and `{text}`
    /// (the whole line) are replaced.
    pub body: String,
    /// How long after the push the comment is posted.
    #[serde(default)]
    pub delay_ms: u64,
    /// Also review the PR's own diff when the emulator starts (or resets).
    #[serde(default)]
    pub on_start: bool,
    /// Which real reviewer it behaves as (`rules`, the default: a thread per
    /// matching line and nothing else).
    #[serde(default)]
    pub profile: BotProfile,
    /// Reviews it makes before refusing the next one (CodeRabbit's rate
    /// limit, Copilot's quota); after a refusal it counts again from zero,
    /// so `0` refuses every time. Never refuses when omitted. Profiles
    /// `coderabbit` and `copilot` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_after: Option<u32>,
    /// The wait a rate-limit notice names ("Next review available in: N
    /// minutes"). Default 30.
    #[serde(default = "default_rate_limit_minutes")]
    pub rate_limit_minutes: u32,
    /// Whether a review finds anything: `false` makes every review a clean
    /// pass whatever the pattern matches. Default `true`.
    #[serde(default = "yes")]
    pub findings: bool,
    /// The comment that makes it review the head again; default by profile
    /// (`@coderabbitai review`, `@codex review`, `/gemini review`; none for
    /// `rules` and `copilot`, which is asked again by a review request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
}

fn default_rate_limit_minutes() -> u32 {
    30
}

/// The real reviewer a bot behaves as (`[[bots]] profile`). Each profile's
/// behaviour, and where it comes from, is in `bots/profiles.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BotProfile {
    /// The emulator's own rule bot: one review thread per matching added
    /// line after each push, and no other sign of having looked.
    #[default]
    Rules,
    /// CodeRabbit: a `CodeRabbit` commit status (pending, then success), a
    /// walkthrough comment edited in place, incremental reviews, a rate
    /// limit with its notice, `@coderabbitai review`.
    Coderabbit,
    /// Codex's reviewer: a review on the reviewed head ("Reviewed commit")
    /// when it has findings, nothing on a clean pass.
    Codex,
    /// Copilot's code review: a requested reviewer that submits a review on
    /// the head (also on a clean pass), or a comment that the quota is used.
    Copilot,
    /// A bot that reviews only when a comment asks (`/gemini review`).
    AskOnly,
}

impl BotProfile {
    /// The trigger comment when the scenario names none.
    pub(crate) fn default_trigger(self) -> Option<&'static str> {
        match self {
            BotProfile::Rules | BotProfile::Copilot => None,
            BotProfile::Coderabbit => Some("@coderabbitai review"),
            BotProfile::Codex => Some("@codex review"),
            BotProfile::AskOnly => Some("/gemini review"),
        }
    }
}

impl BotSpec {
    /// A bot rule without path filter, delay or start-up review.
    pub fn new(
        login: impl Into<String>,
        pattern: impl Into<String>,
        body: impl Into<String>,
    ) -> Self {
        BotSpec {
            login: login.into(),
            pattern: pattern.into(),
            path: None,
            body: body.into(),
            delay_ms: 0,
            on_start: false,
            profile: BotProfile::Rules,
            rate_limit_after: None,
            rate_limit_minutes: default_rate_limit_minutes(),
            findings: true,
            trigger: None,
        }
    }

    /// The same rule, behaving as `profile`.
    pub fn with_profile(mut self, profile: BotProfile) -> Self {
        self.profile = profile;
        self
    }

    /// The trigger comment: the scenario's, else the profile's.
    pub(crate) fn trigger(&self) -> Option<&str> {
        self.trigger
            .as_deref()
            .or_else(|| self.profile.default_trigger())
    }
}

/// What a fault does to the call it fires on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultEffect {
    /// Answer `status` (default 500) with `body` (default GitHub's error JSON).
    Status,
    /// GraphQL only: HTTP 200 with `{"data": null, "errors": [...]}`.
    GraphqlError,
    /// Wait `delay_ms`, then serve the call normally.
    Delay,
    /// A rate limit: `status` 403 (default) or 429, `Retry-After` and the
    /// `x-ratelimit-*` headers.
    RateLimit,
    /// Perform the call (the change happens), then answer 502.
    CommitThenFail,
}

/// A fault (`[[faults]]`, or `POST /_emulator/faults` as JSON with the same
/// keys). Exactly one of `nth`, `every` and `probability` says when it fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// A REST route template (`POST /repos/{owner}/{repo}/issues/{number}/comments`,
    /// parameter names do not matter) or `graphql:<OperationName>`.
    pub target: String,
    /// Fire on the Nth matching call (1-based), counted from when the fault
    /// was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth: Option<u64>,
    /// Fire on every matching call.
    #[serde(default, skip_serializing_if = "is_false")]
    pub every: bool,
    /// Fire on each matching call with this probability (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// The seed of the probability's generator (default 0), for repeatable runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// What happens.
    pub effect: FaultEffect,
    /// HTTP status of `status` and `rate_limit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Response body of `status` (sent as is, JSON when it parses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Message of `graphql_error` (and of `status` without `body`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// GitHub's error `type` of `graphql_error` (none by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Milliseconds of `delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// `Retry-After` seconds of `rate_limit` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_secs: Option<u64>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl FaultSpec {
    fn base(target: impl Into<String>) -> Self {
        FaultSpec {
            target: target.into(),
            nth: None,
            every: false,
            probability: None,
            seed: None,
            effect: FaultEffect::Status,
            status: None,
            body: None,
            message: None,
            error_type: None,
            delay_ms: None,
            retry_after_secs: None,
        }
    }

    /// Fires on the `n`th matching call (1-based); answers 500 until another
    /// effect is chosen.
    pub fn nth(target: impl Into<String>, n: u64) -> Self {
        FaultSpec {
            nth: Some(n),
            ..Self::base(target)
        }
    }

    /// Fires on every matching call; answers 500 until another effect is chosen.
    pub fn every(target: impl Into<String>) -> Self {
        FaultSpec {
            every: true,
            ..Self::base(target)
        }
    }

    /// Fires with `probability` on each matching call, from a seeded generator.
    pub fn probability(target: impl Into<String>, probability: f64, seed: u64) -> Self {
        FaultSpec {
            probability: Some(probability),
            seed: Some(seed),
            ..Self::base(target)
        }
    }

    /// Answers `status` with `body` (GitHub's error JSON when `None`).
    pub fn with_status(mut self, status: u16, body: Option<&str>) -> Self {
        self.effect = FaultEffect::Status;
        self.status = Some(status);
        self.body = body.map(str::to_owned);
        self
    }

    /// Answers 200 with a GraphQL error carrying `message`.
    pub fn with_graphql_error(mut self, message: impl Into<String>) -> Self {
        self.effect = FaultEffect::GraphqlError;
        self.message = Some(message.into());
        self
    }

    /// Delays the call by `ms` milliseconds.
    pub fn with_delay(mut self, ms: u64) -> Self {
        self.effect = FaultEffect::Delay;
        self.delay_ms = Some(ms);
        self
    }

    /// Answers a rate limit: `status` 403 or 429, `Retry-After: retry_after_secs`.
    pub fn with_rate_limit(mut self, status: u16, retry_after_secs: u64) -> Self {
        self.effect = FaultEffect::RateLimit;
        self.status = Some(status);
        self.retry_after_secs = Some(retry_after_secs);
        self
    }

    /// Performs the call, then answers 502.
    pub fn with_commit_then_fail(mut self) -> Self {
        self.effect = FaultEffect::CommitThenFail;
        self
    }

    /// The target in its canonical form: `graphql:Name`, or `METHOD /path`
    /// with every `{param}` written `{}` and no `/api/v3` prefix.
    pub fn canonical_target(&self) -> String {
        canonical_target(&self.target)
    }

    /// Checks the fault: a known target form, one trigger, a usable effect.
    pub fn validate(&self) -> Result<(), String> {
        let target = self.target.trim();
        let graphql = target.starts_with("graphql:");
        if graphql {
            if target.len() == "graphql:".len() {
                return Err("target `graphql:` needs an operation name".into());
            }
        } else {
            let Some((method, path)) = target.split_once(' ') else {
                return Err(format!(
                    "target `{target}`: expected `METHOD /path` or `graphql:Operation`"
                ));
            };
            if !matches!(method, "GET" | "POST" | "PATCH" | "PUT" | "DELETE") {
                return Err(format!("target `{target}`: unknown method `{method}`"));
            }
            if !path.starts_with('/') {
                return Err(format!("target `{target}`: the path must start with `/`"));
            }
        }
        let triggers = usize::from(self.nth.is_some())
            + usize::from(self.every)
            + usize::from(self.probability.is_some());
        if triggers != 1 {
            return Err(format!(
                "fault on `{target}`: set exactly one of `nth`, `every`, `probability`"
            ));
        }
        if self.nth == Some(0) {
            return Err(format!("fault on `{target}`: `nth` starts at 1"));
        }
        if let Some(p) = self.probability {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!(
                    "fault on `{target}`: `probability` must be between 0 and 1"
                ));
            }
        }
        if let Some(status) = self.status {
            if !(100..=599).contains(&status) {
                return Err(format!("fault on `{target}`: status {status} is not HTTP"));
            }
        }
        match self.effect {
            FaultEffect::GraphqlError if !graphql => Err(format!(
                "fault on `{target}`: `graphql_error` needs a `graphql:` target"
            )),
            FaultEffect::Delay if self.delay_ms.is_none() => {
                Err(format!("fault on `{target}`: `delay` needs `delay_ms`"))
            }
            FaultEffect::RateLimit if !matches!(self.status, None | Some(403) | Some(429)) => Err(
                format!("fault on `{target}`: a rate limit answers 403 or 429"),
            ),
            _ => Ok(()),
        }
    }
}

/// `METHOD /path/{x}` with every `{param}` as `{}` and no `/api/v3` prefix;
/// `graphql:` targets unchanged.
pub(crate) fn canonical_target(target: &str) -> String {
    let target = target.trim();
    if target.starts_with("graphql:") {
        return target.to_owned();
    }
    let (method, path) = target.split_once(' ').unwrap_or(("", target));
    let path = path.trim();
    let path = path.strip_prefix("/api/v3").unwrap_or(path);
    format!("{} {}", method.to_ascii_uppercase(), path_shape(path))
}

/// A path template with every `{param}` as `{}`:
/// `/repos/{owner}/{repo}/pulls/{number}` is `/repos/{}/{}/pulls/{}`.
pub fn path_shape(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut in_param = false;
    for c in template.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push_str("{}");
            }
            '}' => in_param = false,
            _ if in_param => {}
            _ => out.push(c),
        }
    }
    out
}

/// Whether `path` matches a glob: `**` spans directories, `*` and `?` do
/// not. globset, with the options of `shepherd_core::glob` (the emulator
/// stands apart from Shepherd's crates, so it does not import them). An
/// invalid glob matches nothing.
pub(crate) fn glob_matches(glob: &str, path: &str) -> bool {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_canonical_whatever_the_parameter_names() {
        assert_eq!(
            canonical_target("POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies"),
            canonical_target(
                "POST /api/v3/repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies"
            )
        );
        assert_eq!(
            canonical_target("graphql:ResolveReviewThread"),
            "graphql:ResolveReviewThread"
        );
    }

    #[test]
    fn faults_need_one_trigger_and_a_usable_effect() {
        assert!(FaultSpec::nth("graphql:X", 1).validate().is_ok());
        assert!(FaultSpec::nth("graphql:X", 0).validate().is_err());
        let mut both = FaultSpec::nth("graphql:X", 1);
        both.every = true;
        assert!(both.validate().is_err());
        assert!(FaultSpec::every("GET /user")
            .with_graphql_error("x")
            .validate()
            .is_err());
        assert!(FaultSpec::every("FETCH /user").validate().is_err());
        assert!(FaultSpec::probability("GET /user", 1.5, 1)
            .validate()
            .is_err());
        assert!(FaultSpec::every("GET /user")
            .with_rate_limit(500, 1)
            .validate()
            .is_err());
        let mut delay = FaultSpec::every("GET /user");
        delay.effect = FaultEffect::Delay;
        assert!(delay.validate().is_err());
    }

    #[test]
    fn globs() {
        assert!(glob_matches("src/**", "src/auth/login.sh"));
        assert!(glob_matches("src/**/*.sh", "src/login.sh"));
        assert!(glob_matches("src/**/*.sh", "src/auth/login.sh"));
        assert!(glob_matches("*.sh", "verify.sh"));
        assert!(!glob_matches("*.sh", "src/a.sh"));
        assert!(glob_matches("src/?uth/*", "src/auth/x"));
        assert!(!glob_matches("src/auth/*", "src/util/x"));
    }
}
