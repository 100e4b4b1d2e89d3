//! Every forge Shepherd drives, described once: its words, hosts, URL
//! paths, token variables and the rule that keeps its credentials away
//! from agents.
//!
//! [`ForgeKind::spec`] is the one `match` that lists the forges; what is
//! forge-specific elsewhere (the forge crate's clients, the URL shapes of
//! `target.rs`, a suggestion's syntax) matches on [`ForgeKind`] or on a
//! flavour named here, so the compiler finds every place a new forge must
//! be added. `docs/extending.md` lists them.
//!
//! The credential rule ([`is_forge_credential_name`],
//! [`is_forge_variable`]) is derived from these descriptions: a forge's
//! token variables, variable prefixes and name words are sealed out of
//! every agent's environment as soon as the forge is described here.

use crate::model::ForgeKind;

/// How a forge's review comments write a suggested change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuggestionSyntax {
    /// ```` ```suggestion ```` replacing exactly the commented lines (GitHub).
    Fenced,
    /// ```` ```suggestion:-A+B ```` relative to the commented line, applied
    /// to the file at the head the forge traced the thread to (GitLab).
    RelativeRange,
}

/// One forge, described (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForgeSpec {
    /// The word users type and the state database stores (`github`).
    pub name: &'static str,
    /// The product name in sentences (`GitHub`).
    pub display_name: &'static str,
    /// What this forge calls a change request (`pull request`).
    pub request_noun: &'static str,
    /// Its short form in a target (`PR`), matched case-insensitively.
    pub request_abbrev: &'static str,
    /// The first word of the two-word spelling (`pull` of "pull request").
    pub request_word: &'static str,
    /// The sigil before a request's number (`#42`, `!42`).
    pub number_sigil: char,
    /// What one review-thread comment is called (`review comment`, `note`).
    pub comment_noun: &'static str,
    /// The public host (`github.com`).
    pub default_host: &'static str,
    /// Other names of the public host (`www.github.com`, its ssh host).
    pub host_aliases: &'static [&'static str],
    /// The first DNS label that suggests a self-hosted instance (`github`
    /// in `github.corp.example`), used only when nothing else says.
    pub host_label: &'static str,
    /// The path of the REST API under a self-hosted instance's root
    /// (`/api/v3`); an `--api-url` ending in it names this forge.
    pub api_path: &'static str,
    /// The configuration key listing self-hosted instances.
    pub hosts_key: &'static str,
    /// The token variables read for the public host, in order.
    pub token_vars: &'static [&'static str],
    /// The token variables read for a self-hosted instance, in order.
    pub self_hosted_token_vars: &'static [&'static str],
    /// The forge's own CLI, asked for a stored token when no variable is set.
    pub cli: &'static str,
    /// The user name of HTTPS git access with a token
    /// (`x-access-token:TOKEN`).
    pub git_username: &'static str,
    /// Further variable names holding this forge's credentials (the CLI's
    /// own, a CI job's token).
    pub other_credential_vars: &'static [&'static str],
    /// Prefixes of variables that configure this forge or its CLI
    /// (`GH_`, `GITHUB_`); every such variable is kept from agents.
    pub env_prefixes: &'static [&'static str],
    /// A word in a variable's name that marks it as this forge's (`GITHUB`
    /// in `COPILOT_GITHUB_TOKEN`); such a variable is kept from agents.
    pub name_word: &'static str,
    /// The most characters a comment body may have.
    pub comment_body_limit: usize,
    /// How a suggested change is written.
    pub suggestion: SuggestionSyntax,
}

const GITHUB: ForgeSpec = ForgeSpec {
    name: "github",
    display_name: "GitHub",
    request_noun: "pull request",
    request_abbrev: "pr",
    request_word: "pull",
    number_sigil: '#',
    comment_noun: "review comment",
    default_host: "github.com",
    host_aliases: &["www.github.com", "ssh.github.com"],
    host_label: "github",
    api_path: "/api/v3",
    hosts_key: "forge.github_hosts",
    token_vars: &["GITHUB_TOKEN", "GH_TOKEN"],
    // The Enterprise-specific ones first, so a github.com token in
    // `GITHUB_TOKEN` does not shadow the one meant for the Enterprise host.
    self_hosted_token_vars: &[
        "GH_ENTERPRISE_TOKEN",
        "GITHUB_ENTERPRISE_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
    ],
    cli: "gh",
    git_username: "x-access-token",
    other_credential_vars: &[],
    env_prefixes: &["GH_", "GITHUB_"],
    name_word: "GITHUB",
    comment_body_limit: 65_536,
    suggestion: SuggestionSyntax::Fenced,
};

const GITLAB: ForgeSpec = ForgeSpec {
    name: "gitlab",
    display_name: "GitLab",
    request_noun: "merge request",
    request_abbrev: "mr",
    request_word: "merge",
    number_sigil: '!',
    comment_noun: "note",
    default_host: "gitlab.com",
    host_aliases: &["www.gitlab.com", "altssh.gitlab.com"],
    host_label: "gitlab",
    api_path: "/api/v4",
    hosts_key: "forge.gitlab_hosts",
    // `GL_TOKEN` is the name semantic-release and others use.
    token_vars: &["GITLAB_TOKEN", "GITLAB_ACCESS_TOKEN", "GL_TOKEN"],
    self_hosted_token_vars: &["GITLAB_TOKEN", "GITLAB_ACCESS_TOKEN", "GL_TOKEN"],
    cli: "glab",
    git_username: "oauth2",
    other_credential_vars: &["GLAB_TOKEN", "CI_JOB_TOKEN"],
    env_prefixes: &["GITLAB_", "GL_", "GLAB_"],
    name_word: "GITLAB",
    // Notes.
    comment_body_limit: 1_000_000,
    suggestion: SuggestionSyntax::RelativeRange,
};

impl ForgeKind {
    /// Every forge, in the order a choice lists them.
    pub const ALL: [ForgeKind; 2] = [ForgeKind::GitHub, ForgeKind::GitLab];

    /// The description of this forge. (The one `match` naming every forge.)
    pub const fn spec(self) -> &'static ForgeSpec {
        match self {
            ForgeKind::GitHub => &GITHUB,
            ForgeKind::GitLab => &GITLAB,
        }
    }

    /// The forge a user-typed or stored word names (`github`, `gitlab`).
    pub fn from_name(name: &str) -> Option<ForgeKind> {
        ForgeKind::ALL.into_iter().find(|k| k.spec().name == name)
    }

    /// The forge whose public host is `host` (a bare name, no port).
    pub fn of_public_host(host: &str) -> Option<ForgeKind> {
        ForgeKind::ALL
            .into_iter()
            .find(|k| k.spec().default_host == host)
    }

    /// The forge whose REST API an `--api-url` ending in `/api/vN` is;
    /// `None` when the URL ends in no forge's API path.
    pub fn of_api_path(url: &str) -> Option<ForgeKind> {
        let url = url.trim_end_matches('/');
        ForgeKind::ALL
            .into_iter()
            .find(|k| url.ends_with(k.spec().api_path))
    }

    /// Every token variable this forge's token discovery reads, public and
    /// self-hosted, and its other credential variables.
    pub fn credential_vars(self) -> impl Iterator<Item = &'static str> {
        let s = self.spec();
        s.token_vars
            .iter()
            .chain(s.self_hosted_token_vars)
            .chain(s.other_credential_vars)
            .copied()
    }
}

/// Words that make a forge-marked variable name a credential.
const SECRET_WORDS: [&str; 7] = [
    "TOKEN",
    "PASSWORD",
    "SECRET",
    "KEY",
    "CREDENTIAL",
    "PAT",
    "AUTH",
];

/// Whether `upper` (an upper-case variable name) is marked as some forge's:
/// one of its prefixes, or its name word anywhere.
fn forge_marked(upper: &str) -> bool {
    ForgeKind::ALL.iter().any(|k| {
        let s = k.spec();
        upper.contains(s.name_word) || s.env_prefixes.iter().any(|p| upper.starts_with(p))
    })
}

/// Whether an environment variable name holds forge credentials: a token
/// variable of any forge ([`ForgeKind::credential_vars`]), or a forge-marked
/// name (a forge's prefix or name word) with a token, password, secret,
/// key, PAT or auth in it. Case-insensitive. Such names are refused in
/// `agent.env`; `GITHUB_REPOSITORY` is not one.
pub fn is_forge_credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if ForgeKind::ALL
        .iter()
        .any(|k| k.credential_vars().any(|v| v == upper))
    {
        return true;
    }
    forge_marked(&upper) && SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// Whether an environment variable holds or configures forge credentials,
/// the rule that seals agents' environments: every name with a forge's
/// prefix (`GH_HOST`) or name word (`COPILOT_GITHUB_TOKEN`), and every
/// [`is_forge_credential_name`]. Case-insensitive.
pub fn is_forge_variable(name: &str) -> bool {
    forge_marked(&name.to_ascii_uppercase()) || is_forge_credential_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_forge_is_described_consistently() {
        for kind in ForgeKind::ALL {
            let s = kind.spec();
            assert_eq!(ForgeKind::from_name(s.name), Some(kind), "{}", s.name);
            assert_eq!(ForgeKind::of_public_host(s.default_host), Some(kind));
            assert_eq!(
                ForgeKind::of_api_path(&format!("https://h.example{}/", s.api_path)),
                Some(kind)
            );
            assert!(!s.token_vars.is_empty() && !s.self_hosted_token_vars.is_empty());
            assert!(!s.env_prefixes.is_empty() && !s.cli.is_empty());
            assert!(s.hosts_key.starts_with("forge.") && s.hosts_key.ends_with("_hosts"));
            assert!(s.comment_body_limit > 0);
        }
        // No two forges share a name, a host, a sigil, an abbreviation or an API path.
        for a in ForgeKind::ALL {
            for b in ForgeKind::ALL.into_iter().filter(|b| *b != a) {
                let (a, b) = (a.spec(), b.spec());
                assert_ne!(a.name, b.name);
                assert_ne!(a.default_host, b.default_host);
                assert_ne!(a.number_sigil, b.number_sigil);
                assert_ne!(a.request_abbrev, b.request_abbrev);
                assert_ne!(a.api_path, b.api_path);
            }
        }
    }

    #[test]
    fn every_forge_token_variable_is_sealed() {
        for kind in ForgeKind::ALL {
            for var in kind.credential_vars() {
                assert!(is_forge_credential_name(var), "{kind}: {var}");
                assert!(is_forge_variable(var), "{kind}: {var}");
                assert!(
                    is_forge_variable(&var.to_ascii_lowercase()),
                    "{kind}: {var}"
                );
            }
            for prefix in kind.spec().env_prefixes {
                assert!(is_forge_variable(&format!("{prefix}HOST")), "{prefix}");
                assert!(
                    is_forge_credential_name(&format!("{prefix}TOKEN")),
                    "{prefix}"
                );
            }
            let word = kind.spec().name_word;
            assert!(is_forge_variable(&format!("COPILOT_{word}_TOKEN")));
            assert!(is_forge_credential_name(&format!("MY_{word}_PAT")));
        }
    }

    #[test]
    fn model_keys_and_plain_variables_are_not_forge_credentials() {
        for name in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PATH", "CARGO_HOME"] {
            assert!(!is_forge_variable(name), "{name}");
            assert!(!is_forge_credential_name(name), "{name}");
        }
        // Forge-marked, but no credential: refused nowhere, sealed still.
        assert!(!is_forge_credential_name("GITHUB_REPOSITORY"));
        assert!(is_forge_variable("GITHUB_REPOSITORY"));
    }
}
