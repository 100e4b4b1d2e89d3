//! `shepherd threads`: what a round would see, and why. Read-only.

use std::collections::BTreeMap;

use clap::Args;
use serde::Serialize;
use shepherd_core::classify::{classify, rebuild_ledger_from_markers, Class, Classified, ItemKind};
use shepherd_core::cluster::{
    evaluate_gate, group, ClusterGateInput, ClusterItem, GateDecision, Grouping,
};
use shepherd_core::config::{Config, Overrides};
use shepherd_core::escape::visible;
use shepherd_core::target::Target;
use shepherd_core::theme::{classify_theme, Theme};
use shepherd_core::{AuthorKind, Ledger, PrSnapshot};
use shepherd_forge::UserAccess;

use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::setup::{
    config_layers, connect, current_forge_config, endpoint_hint, resolve_target_with, runtime,
    trusted_repo_config, with_target_scheme, ForgeArgs,
};
use crate::ui::outln;
use crate::ui::Style;

/// Show the unresolved feedback of a PR and how a round would classify it
///
/// Fetches every unresolved review thread (outdated ones included), top-level
/// comment and review body, and says for each whether it is new, awaiting a
/// reviewer, or waiting for a resolve retry. Nothing is changed on the forge.
#[derive(Debug, Args)]
pub(crate) struct ThreadsArgs {
    /// The PR: `42`, `#42`, `owner/repo#42`, or a PR URL
    #[arg(value_name = "TARGET")]
    target: String,

    #[command(flatten)]
    forge: ForgeArgs,

    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
}

/// The `--json` output.
#[derive(Debug, Serialize)]
struct ThreadsReport<'a> {
    target: &'a Target,
    viewer: &'a str,
    pr: &'a shepherd_core::PullRequest,
    counts: Counts,
    items: &'a [Item],
    clusters: Clusters,
}

/// One item as a round would treat it: its class, and for a new item whose
/// author is not trusted, why a round reports it and does not act on it.
#[derive(Debug, Serialize)]
struct Item {
    #[serde(flatten)]
    classified: Classified,
    /// Why a round does not act on it (`[trust]`); `None` when it does.
    untrusted: Option<String>,
}

impl Item {
    /// Whether a round would triage it: new and trusted.
    fn acted_on(&self) -> bool {
        self.classified.class == Class::New && self.untrusted.is_none()
    }
}

/// The clusters a round would form from the new items (SPEC section 5).
#[derive(Debug, Serialize)]
struct Clusters {
    /// The theme of each new item, as the lexical classifier sees it.
    themes: std::collections::BTreeMap<String, Theme>,
    /// The structural gate: only the volume signal is visible without a run's history.
    gate: GateDecision,
    /// The grouping, whether or not the gate is open.
    grouping: Grouping,
}

impl Clusters {
    fn of(snapshot: &PrSnapshot, items: &[Item], config: &Config, targeted: bool) -> Self {
        let mut themes = std::collections::BTreeMap::new();
        let mut cluster_items = Vec::new();
        // What a round triages and clusters: new, trusted items only.
        for item in items.iter().filter(|i| i.acted_on()).map(|i| &i.classified) {
            let theme = classify_theme(root_body(snapshot, &item.item_id), None);
            themes.insert(item.item_id.clone(), theme);
            cluster_items.push(ClusterItem::new(
                item.item_id.clone(),
                item.path.as_deref(),
                theme,
            ));
        }
        let gate = evaluate_gate(&ClusterGateInput {
            new_items: cluster_items.len(),
            min_volume: config.cluster.min_volume,
            fix_rounds_this_run_before: false,
            earlier_run_fixes: false,
            enabled: config.cluster.enabled,
            targeted,
        });
        Clusters {
            themes,
            gate,
            grouping: group(&cluster_items),
        }
    }
}

/// The opening comment of an item: what its theme is read from.
fn root_body<'a>(snapshot: &'a PrSnapshot, id: &str) -> &'a str {
    if let Some(thread) = snapshot.threads.iter().find(|t| t.id == id) {
        return thread.root().map_or("", |c| c.body.as_str());
    }
    snapshot
        .comments
        .iter()
        .find(|c| c.id == id)
        .map_or("", |c| c.body.as_str())
}

#[derive(Debug, Default, Serialize)]
struct Counts {
    /// New items a round would triage (trusted).
    new: usize,
    /// New items a round reports and does not act on (author not trusted).
    untrusted: usize,
    resolve_retry: usize,
    awaiting_reviewer: usize,
}

impl Counts {
    fn of(items: &[Item]) -> Self {
        let mut counts = Counts::default();
        for item in items {
            match item.classified.class {
                Class::New if item.untrusted.is_some() => counts.untrusted += 1,
                Class::New => counts.new += 1,
                Class::ResolveRetry => counts.resolve_retry += 1,
                Class::AwaitingReviewer => counts.awaiting_reviewer += 1,
            }
        }
        counts
    }
}

pub(crate) fn cmd_threads(args: ThreadsArgs) -> CliResult<u8> {
    let mut layers = config_layers(Overrides::default())?;
    let target = resolve_target_with(&args.target, &args.forge, &layers)?;
    let forge_args = with_target_scheme(&args.target, &target, &args.forge);
    // The configuration a run would start with (user layers and the
    // checkout's repository file): who is trusted, how items cluster.
    if let (Some(file), _) = trusted_repo_config(&target)? {
        layers.insert(0, file);
    }
    let config = Config::layered(&layers).map_err(CliError::usage)?;
    let forge = connect(&target, &forge_args, &current_forge_config(&layers)?)?;
    let rt = runtime()?;
    let snapshot: PrSnapshot = rt.block_on(forge.snapshot(target.number)).map_err(|e| {
        CliError::failure(e).with_unreachable_hint(|| endpoint_hint(&target, &forge_args))
    })?;

    // No state store yet: the ledger is what Shepherd's markers on the PR say.
    let ledger: Ledger = rebuild_ledger_from_markers(&snapshot, &snapshot.viewer)
        .into_iter()
        .collect();
    let mut classified = classify(&snapshot, &ledger);
    if let shepherd_core::target::Mode::Targeted(selected) = target.mode {
        classified.retain(|item| targeted_matches(&snapshot, item, selected));
    }
    // As a round sees them: a new item of an untrusted author is reported,
    // not acted on (the run asks the same `[trust]` question, and the forge
    // the same one about each person's access).
    // A forge that cannot tell (GitHub answers the permission API only to
    // tokens with push access) leaves the person untrusted here, and says
    // why; a run fails its round closed instead.
    let mut access: BTreeMap<String, Result<UserAccess, String>> = BTreeMap::new();
    for c in &classified {
        let Some(author) = c.author.as_ref() else {
            continue;
        };
        if c.class != Class::New
            || !config.trust.needs_access(Some(author))
            || access.contains_key(&author.login)
        {
            continue;
        }
        let user = rt.block_on(forge.user_access(&author.login)).map_err(|e| {
            format!(
                "cannot tell whether @{} may write to the repository (`[trust]`): {e}",
                author.login
            )
        });
        access.insert(author.login.clone(), user);
    }
    let items: Vec<Item> = classified
        .into_iter()
        .map(|c| {
            let known = c.author.as_ref().and_then(|a| access.get(&a.login));
            let untrusted = match known {
                _ if c.class != Class::New => None,
                Some(Err(why)) => Some(why.clone()),
                Some(Ok(user)) => config.trust.untrusted_because(
                    c.author.as_ref(),
                    user.can_write,
                    Some(&user.role),
                ),
                None => config
                    .trust
                    .untrusted_because(c.author.as_ref(), false, None),
            };
            Item {
                untrusted,
                classified: c,
            }
        })
        .collect();

    let counts = Counts::of(&items);
    let clusters = Clusters::of(&snapshot, &items, &config, target.is_targeted());
    if args.json {
        let report = ThreadsReport {
            target: &target,
            viewer: &snapshot.viewer,
            pr: &snapshot.pr,
            counts,
            items: &items,
            clusters,
        };
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::failure(anyhow::anyhow!(e)))?;
        outln!("{text}");
    } else {
        print_text(&target, &snapshot, &items, &counts);
        print_clusters(&clusters);
    }
    Ok(exit_codes::SUCCESS)
}

/// Whether `item` is the thread a `#discussion_r…` URL selected.
fn targeted_matches(
    snapshot: &PrSnapshot,
    item: &Classified,
    selected: shepherd_core::target::TargetedThread,
) -> bool {
    use shepherd_core::target::TargetedThread;
    match selected {
        TargetedThread::GitHubDiscussion(database_id) | TargetedThread::GitLabNote(database_id) => {
            snapshot.threads.iter().any(|thread| {
                thread.id == item.item_id
                    && thread
                        .comments
                        .iter()
                        .any(|c| c.database_id == Some(database_id))
            })
        }
    }
}

fn print_text(target: &Target, snapshot: &PrSnapshot, items: &[Item], counts: &Counts) {
    let style = Style::stdout();
    let pr = &snapshot.pr;
    let short_sha: String = pr.head_sha.chars().take(7).collect();
    outln!(
        "{} {}",
        style.bold(&visible(&target.to_string())),
        style.dim(&format!("\"{}\"", visible(&pr.title)))
    );
    outln!(
        "  state {:?}, head {} at {}, base {}, viewer @{}{}{}",
        pr.state,
        visible(&pr.head_ref),
        short_sha,
        visible(&pr.base_ref),
        visible(&snapshot.viewer),
        if pr.is_cross_repository {
            ", head in a FORK (shepherd run refuses fork PRs)"
        } else {
            ""
        },
        if pr.viewer_has_pending_review {
            ", viewer has a PENDING review (replies would vanish into it)"
        } else {
            ""
        }
    );
    let untrusted = if counts.untrusted > 0 {
        format!(", {} untrusted (reported, not acted on)", counts.untrusted)
    } else {
        String::new()
    };
    outln!(
        "  {} items: {} new, {} awaiting reviewer, {} resolve-retry{untrusted}",
        items.len(),
        counts.new,
        counts.awaiting_reviewer,
        counts.resolve_retry
    );
    for entry in items {
        let item = &entry.classified;
        let class = match item.class {
            Class::New if entry.untrusted.is_some() => style.dim("untrusted"),
            Class::New => style.yellow("new"),
            Class::ResolveRetry => style.cyan("resolve-retry"),
            Class::AwaitingReviewer => style.green("awaiting-reviewer"),
        };
        let location = match (&item.path, item.line) {
            (Some(path), Some(line)) => visible(&format!("{path}:{line}")),
            (Some(path), None) => visible(path),
            (None, _) => format!("({})", kind_label(item.kind)),
        };
        let author = match &item.author {
            Some(a) if a.kind == AuthorKind::Bot => format!("@{} [bot]", visible(&a.login)),
            Some(a) => format!("@{}", visible(&a.login)),
            None => "@ghost".to_owned(),
        };
        outln!();
        outln!(
            "{class}  {}  {}  {}{}",
            style.bold(&location),
            author,
            style.dim(&visible(&item.item_id)),
            if item.outdated { "  (outdated)" } else { "" }
        );
        outln!("    {}", visible(&item.reason));
        if let Some(why) = &entry.untrusted {
            outln!("    not acted on: {}", visible(why));
        }
    }
}

fn kind_label(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::ReviewThread => "review thread",
        ItemKind::IssueComment => "conversation comment",
        ItemKind::ReviewBody => "review body",
    }
}

fn print_clusters(clusters: &Clusters) {
    let style = Style::stdout();
    if clusters.themes.is_empty() {
        return;
    }
    outln!();
    let signals: Vec<String> = clusters
        .gate
        .signals
        .iter()
        .map(|s| match s {
            shepherd_core::cluster::GateSignal::Volume { count, min } => {
                format!("{count} new items >= cluster.min_volume {min}")
            }
            shepherd_core::cluster::GateSignal::ReentryWithinRun => "re-entry in this run".into(),
            shepherd_core::cluster::GateSignal::ReentryAcrossRuns => {
                "fixes from an earlier run".into()
            }
        })
        .collect();
    if clusters.gate.open {
        outln!(
            "{} (gate open: {})",
            style.bold("Clusters a round would form"),
            signals.join(", ")
        );
    } else {
        outln!(
            "{} (gate closed: fewer new items than cluster.min_volume and no re-entry; \
             a run would not cluster, shown for information)",
            style.bold("Clusters these items would form")
        );
    }
    if clusters.grouping.clusters.is_empty() {
        outln!("  none: no two new items of one theme are close in the tree");
    }
    for cluster in &clusters.grouping.clusters {
        outln!(
            "  {} in {}: {} items",
            cluster.theme,
            visible(&cluster.area),
            cluster.item_ids.len()
        );
        for id in &cluster.item_ids {
            outln!("    {}", style.dim(&visible(id)));
        }
        outln!("    {}", visible(&cluster.hypothesis));
    }
    if !clusters.grouping.isolated.is_empty() {
        outln!(
            "  isolated (one fix each): {}",
            clusters.grouping.isolated.len()
        );
    }
}
