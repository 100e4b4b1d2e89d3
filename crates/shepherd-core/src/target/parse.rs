//! From what the user typed and the context to the one [`Target`]: the forge,
//! the repository and the number, every contradiction an error.

use url::Url;

use crate::model::{ForgeKind, RepoRef};

use super::error::TargetError;
use super::found::{repo_path_from_segments, repo_path_of, FlagRepo, Found, RepoPath, UrlRef};
use super::host::{
    configured_forge, default_host, forge_from_host_name, normalize_host, same_host,
};
use super::model::{
    ForgeClaim, ForgeSource, Mode, RepoSource, Target, TargetContext, TargetedThread,
};
use super::quote::{quote_input, redact_userinfo, truncate};
use super::scan::{check_number, scan};
use super::urls::describe_thread;

/// Parse `input` into the one PR/MR it names, using `ctx` for what the input
/// leaves open. Deterministic and free of IO.
pub fn parse_target(input: &str, ctx: &TargetContext) -> Result<Target, TargetError> {
    let quoted = quote_input(input);
    let scan = scan(input)?;

    // The number: explicit references win over bare numbers.
    let explicit: Vec<&Found> = scan.refs.iter().filter(|r| r.explicit).collect();
    let candidates: Vec<&Found> = if explicit.is_empty() {
        scan.refs.iter().collect()
    } else {
        explicit
    };
    let Some(first) = candidates.first() else {
        return Err(match scan.issues.first() {
            Some(issue) => TargetError::NotAPullRequest {
                reference: issue.clone(),
                input: quoted,
            },
            None => TargetError::NoNumber { input: quoted },
        });
    };
    for c in &candidates {
        check_number(c, &quoted)?;
    }
    let number = first.number;
    if let Some(other) = candidates.iter().find(|c| c.number != number) {
        return Err(TargetError::NumberConflict {
            first: first.text.clone(),
            second: other.text.clone(),
            input: quoted,
        });
    }

    // The spellings must agree: `PR 42` and `!42` name different things.
    let kinded: Vec<(&Found, ForgeKind)> = candidates
        .iter()
        .filter_map(|c| c.kind.map(|k| (*c, k)))
        .collect();
    if let Some((a, ka)) = kinded.first() {
        if let Some((b, _)) = kinded.iter().find(|(_, k)| k != ka) {
            let (pr, mr) = if *ka == ForgeKind::GitHub {
                (a, b)
            } else {
                (b, a)
            };
            return Err(TargetError::MixedKinds {
                first: pr.text.clone(),
                second: mr.text.clone(),
                input: quoted,
            });
        }
    }

    // URLs must agree on the repository and on the thread.
    let urls: Vec<&UrlRef> = candidates.iter().filter_map(|c| c.url.as_ref()).collect();
    let url = urls.first().copied();
    if let Some(u) = url {
        if let Some(other) = urls.iter().find(|o| !same_repo(&o.repo, &u.repo)) {
            return Err(TargetError::RepoConflict {
                first: u.repo.to_string(),
                first_source: "URL",
                second: other.repo.to_string(),
                second_source: "URL",
            });
        }
    }
    let mut thread: Option<TargetedThread> = None;
    for u in &urls {
        match (thread, u.thread) {
            (Some(a), Some(b)) if a != b => {
                return Err(TargetError::ThreadConflict {
                    first: describe_thread(a),
                    second: describe_thread(b),
                    input: quoted,
                })
            }
            (None, Some(b)) => thread = Some(b),
            _ => {}
        }
    }
    let anchor = urls.iter().find_map(|u| u.anchor);

    // Host: a URL must be on the remote's host.
    if let (Some(u), Some(remote)) = (url, &ctx.remote) {
        if !same_host(&u.repo.host, &remote.repo.host) {
            return Err(TargetError::HostMismatch {
                url: u.text.clone(),
                url_host: u.repo.host.clone(),
                remote_host: remote.repo.host.clone(),
            });
        }
    }

    // Repository: URL, else owner/repo#N, else --repo, else the remote.
    let flag_repo = ctx.repo.as_deref().map(parse_repo_arg).transpose()?;
    let path_ref = candidates.iter().find_map(|c| c.path.as_ref());
    if let Some(p) = path_ref {
        if let Some(other) = candidates
            .iter()
            .filter_map(|c| c.path.as_ref())
            .find(|o| !same_path(o, p))
        {
            return Err(TargetError::RepoConflict {
                first: p.display(),
                first_source: "reference",
                second: other.display(),
                second_source: "reference",
            });
        }
    }
    // A repository named without a host is on the explicit API URL's host,
    // else on the remote's.
    let remote_host = ctx
        .api_host
        .clone()
        .or_else(|| ctx.remote.as_ref().map(|r| r.repo.host.clone()));
    let (host, path, repo_source): (Option<String>, RepoPath, RepoSource) = if let Some(u) = url {
        let url_path = RepoPath {
            owner: u.repo.owner.clone(),
            name: u.repo.name.clone(),
        };
        if let Some(p) = path_ref.filter(|p| !same_path(p, &url_path)) {
            return Err(TargetError::RepoConflict {
                first: u.repo.to_string(),
                first_source: "URL",
                second: p.display(),
                second_source: "reference",
            });
        }
        if let Some(flag) = &flag_repo {
            let host_differs = flag
                .host
                .as_deref()
                .is_some_and(|h| !same_host(h, &u.repo.host));
            if host_differs || !same_path(&flag.path, &url_path) {
                return Err(TargetError::RepoConflict {
                    first: u.repo.to_string(),
                    first_source: "URL",
                    second: flag.display(),
                    second_source: "--repo",
                });
            }
        }
        (Some(u.repo.host.clone()), url_path, RepoSource::Url)
    } else if let Some(p) = path_ref {
        let host = match &flag_repo {
            Some(flag) => {
                if !same_path(&flag.path, p) {
                    return Err(TargetError::RepoConflict {
                        first: p.display(),
                        first_source: "reference",
                        second: flag.display(),
                        second_source: "--repo",
                    });
                }
                flag.host.clone().or(remote_host)
            }
            None => remote_host,
        };
        (host, p.clone(), RepoSource::Reference)
    } else if let Some(flag) = flag_repo {
        (flag.host.or(remote_host), flag.path, RepoSource::Flag)
    } else if let Some(remote) = &ctx.remote {
        (
            Some(remote.repo.host.clone()),
            RepoPath {
                owner: remote.repo.owner.clone(),
                name: remote.repo.name.clone(),
            },
            RepoSource::Remote,
        )
    } else {
        return Err(TargetError::NoRepository { input: quoted });
    };

    // Forge: every certain claim must agree; the first one wins.
    let mut claims: Vec<ForgeClaim> = Vec::new();
    if let Some(u) = url {
        claims.push(ForgeClaim::Url {
            url: u.text.clone(),
            forge: u.forge,
        });
    }
    if let Some(forge) = ctx.forge {
        claims.push(ForgeClaim::Flag(forge));
    }
    if let Some(h) = &host {
        if let Some(forge) = configured_forge(h, ctx) {
            claims.push(ForgeClaim::ConfiguredHost {
                host: h.clone(),
                forge,
            });
        }
    }
    if let Some(remote) = &ctx.remote {
        let on_target_host = host
            .as_deref()
            .is_none_or(|h| same_host(h, &remote.repo.host));
        if let (true, Some(forge)) = (on_target_host, remote.forge) {
            claims.push(ForgeClaim::Remote {
                host: remote.repo.host.clone(),
                forge,
            });
        }
    }
    if let Some(head) = claims.first() {
        if let Some(other) = claims.iter().find(|c| c.forge() != head.forge()) {
            return Err(TargetError::ForgeConflict {
                first: head.clone(),
                second: other.clone(),
            });
        }
    }
    let mut resolved: Option<(ForgeKind, ForgeSource, String)> = claims
        .first()
        .map(|c| (c.forge(), c.source(), claim_desc(c)));

    // The references' kinds must match the forge, or pick it.
    match &resolved {
        Some((forge, _, desc)) => {
            if let Some((bad, kind)) = kinded.iter().find(|(_, k)| k != forge) {
                return Err(TargetError::KindConflict {
                    reference: bad.text.clone(),
                    kind_noun: kind.request_noun(),
                    forge: *forge,
                    source_desc: desc.clone(),
                    suggestion: suggestion(*forge, bad),
                });
            }
        }
        None => {
            resolved = kinded
                .first()
                .map(|(_, k)| (*k, ForgeSource::Reference, String::new()));
        }
    }
    if resolved.is_none() {
        if let Some(forge) = host.as_deref().and_then(forge_from_host_name) {
            resolved = Some((forge, ForgeSource::HostName, String::new()));
        }
    }
    let Some((forge, forge_source, _)) = resolved else {
        return Err(TargetError::UnknownForge {
            subject: host.unwrap_or_else(|| path.display()),
        });
    };

    let host = host.unwrap_or_else(|| default_host(forge).to_owned());
    let repo = RepoRef {
        host,
        owner: path.owner,
        name: path.name,
    };
    if forge == ForgeKind::GitHub && repo.owner.contains('/') {
        return Err(TargetError::InvalidRepo {
            repo: repo.to_string(),
            forge,
            reason: "GitHub repositories are owner/name, without nested groups",
        });
    }

    Ok(Target {
        forge,
        forge_source,
        repo,
        repo_source,
        number,
        mode: thread.map_or(Mode::Full, Mode::Targeted),
        anchor,
    })
}

/// Forges treat owner and repository names case-insensitively.
fn same_path(a: &RepoPath, b: &RepoPath) -> bool {
    a.owner.eq_ignore_ascii_case(&b.owner) && a.name.eq_ignore_ascii_case(&b.name)
}

fn same_repo(a: &RepoRef, b: &RepoRef) -> bool {
    same_host(&a.host, &b.host)
        && a.owner.eq_ignore_ascii_case(&b.owner)
        && a.name.eq_ignore_ascii_case(&b.name)
}

fn parse_repo_arg(value: &str) -> Result<FlagRepo, TargetError> {
    let invalid = |reason| TargetError::InvalidRepoArg {
        value: truncate(&redact_userinfo(value)),
        reason,
    };
    let value = value.trim();
    if value.contains("://") {
        let url = Url::parse(value).map_err(|_| invalid("not a valid URL"))?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| invalid("the URL has no host"))?;
        let host = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let path =
            repo_path_of(url.path()).ok_or_else(|| invalid("expected https://HOST/OWNER/NAME"))?;
        Ok(FlagRepo {
            host: Some(normalize_host(&host)),
            path,
        })
    } else {
        let segments: Vec<&str> = value
            .trim_matches('/')
            .trim_end_matches(".git")
            .split('/')
            .collect();
        let path = repo_path_from_segments(&segments)
            .ok_or_else(|| invalid("expected OWNER/NAME (or GROUP/SUBGROUP/PROJECT)"))?;
        Ok(FlagRepo { host: None, path })
    }
}

fn claim_desc(claim: &ForgeClaim) -> String {
    match claim {
        ForgeClaim::Url { .. } => "from the URL".to_owned(),
        ForgeClaim::Flag(_) => "from --forge".to_owned(),
        ForgeClaim::ConfiguredHost { host, .. } => format!("{host} is configured so"),
        ForgeClaim::Remote { host, .. } => format!("the origin remote is on {host}"),
    }
}

pub(super) fn suggestion(forge: ForgeKind, found: &Found) -> String {
    let n = &found.digits;
    let sigil = forge.spec().number_sigil;
    match (forge, &found.path) {
        (_, Some(p)) => format!("\"{}{sigil}{n}\"", p.display()),
        // How people write each one in prose.
        (ForgeKind::GitHub, None) => format!("\"{n}\", \"#{n}\" or \"PR {n}\""),
        (ForgeKind::GitLab, None) => format!("\"{n}\", \"!{n}\" or \"MR !{n}\""),
    }
}
