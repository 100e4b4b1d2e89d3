//! Why a target or a remote URL was refused.

use crate::model::ForgeKind;

use super::model::ForgeClaim;

/// Why a target or a remote URL was refused. Every message quotes what was
/// refused (credentials redacted) and says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Nothing in the input names a number.
    #[error(
        "no pull request or merge request number in \"{input}\"; \
         name one, e.g. 42, #42, !42 or a URL"
    )]
    NoNumber {
        /// The input.
        input: String,
    },
    /// The reference names number 0.
    #[error("\"{reference}\" in \"{input}\": 0 is not a pull request or merge request number")]
    Zero {
        /// The reference as written.
        reference: String,
        /// The input.
        input: String,
    },
    /// The number does not fit in 64 bits.
    #[error("\"{reference}\" in \"{input}\": the number is too large")]
    TooLarge {
        /// The reference as written.
        reference: String,
        /// The input.
        input: String,
    },
    /// Two references name different numbers.
    #[error("found both {first} and {second} in \"{input}\"; name exactly one")]
    NumberConflict {
        /// The first reference, as written.
        first: String,
        /// The first reference with a different number, as written.
        second: String,
        /// The input.
        input: String,
    },
    /// The only reference is an issue.
    #[error(
        "\"{reference}\" in \"{input}\" is an issue, not a pull request or merge request; \
         name the pull request or merge request"
    )]
    NotAPullRequest {
        /// The issue reference or URL, as written.
        reference: String,
        /// The input.
        input: String,
    },
    /// A reference's kind (`PR`/`#` or `MR`/`!`) contradicts the forge.
    #[error(
        "\"{reference}\" names a {kind_noun}, but the forge is {forge} ({source_desc}); \
         on {forge} write {suggestion}"
    )]
    KindConflict {
        /// The reference as written.
        reference: String,
        /// What the reference names ("pull request" or "merge request").
        kind_noun: &'static str,
        /// The forge it contradicts.
        forge: ForgeKind,
        /// Where that forge came from, in words.
        source_desc: String,
        /// A spelling that would be accepted.
        suggestion: String,
    },
    /// One reference is GitHub-style and another GitLab-style.
    #[error(
        "\"{first}\" names a pull request but \"{second}\" names a merge request \
         in \"{input}\"; name one of them"
    )]
    MixedKinds {
        /// The GitHub-style reference.
        first: String,
        /// The GitLab-style reference.
        second: String,
        /// The input.
        input: String,
    },
    /// One reference mixes a keyword of one forge with the sigil of the other.
    #[error(
        "\"{reference}\" in \"{input}\" mixes a pull request with a merge request; \
         write PR #N (GitHub) or MR !N (GitLab)"
    )]
    MixedReference {
        /// The reference as written.
        reference: String,
        /// The input.
        input: String,
    },
    /// Two sources disagree about the forge.
    #[error("conflicting forges: {first}, but {second}")]
    ForgeConflict {
        /// The stronger claim.
        first: ForgeClaim,
        /// The claim contradicting it.
        second: ForgeClaim,
    },
    /// The URL is on another host than the `origin` remote.
    #[error(
        "\"{url}\" is on host {url_host}, but the origin remote is on {remote_host}; \
         run shepherd in a clone of that repository, or name a target on {remote_host}"
    )]
    HostMismatch {
        /// The URL, credentials redacted.
        url: String,
        /// The URL's host.
        url_host: String,
        /// The remote's host.
        remote_host: String,
    },
    /// Two sources name different repositories.
    #[error("conflicting repositories: {first} ({first_source}) and {second} ({second_source}); name one")]
    RepoConflict {
        /// The first repository.
        first: String,
        /// Where it came from.
        first_source: &'static str,
        /// The other repository.
        second: String,
        /// Where it came from.
        second_source: &'static str,
    },
    /// Two URLs select different threads.
    #[error(
        "\"{input}\" selects two different threads ({first} and {second}); \
         targeted mode handles exactly one"
    )]
    ThreadConflict {
        /// The first thread anchor.
        first: String,
        /// The other thread anchor.
        second: String,
        /// The input.
        input: String,
    },
    /// A pull request or merge request URL that cannot be used.
    #[error("\"{url}\": {reason}")]
    InvalidUrl {
        /// The URL, credentials redacted.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The `--repo` value is not a repository.
    #[error("invalid --repo \"{value}\": {reason}")]
    InvalidRepoArg {
        /// The value, credentials redacted.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The resolved repository is not valid on its forge.
    #[error("invalid repository {repo} for {forge}: {reason}")]
    InvalidRepo {
        /// The repository.
        repo: String,
        /// Its forge.
        forge: ForgeKind,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Nothing tells whether the host is GitHub or GitLab.
    #[error(
        "cannot tell whether {subject} is on GitHub or GitLab; \
         pass --forge github or --forge gitlab, or list the host in the configuration"
    )]
    UnknownForge {
        /// The host, or the repository when no host is known.
        subject: String,
    },
    /// No URL, reference, `--repo` or remote names a repository.
    #[error(
        "no repository for \"{input}\": run shepherd inside a clone with an origin remote, \
         pass --repo OWNER/NAME, or name the target by URL"
    )]
    NoRepository {
        /// The input.
        input: String,
    },
    /// A git remote URL that does not name a forge repository.
    #[error("cannot read the remote URL \"{url}\": {reason}")]
    InvalidRemote {
        /// The URL, credentials redacted.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}
