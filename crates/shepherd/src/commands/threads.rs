//! `shepherd threads`: what a round would see, and why. Read-only.

use clap::Args;
use serde::Serialize;
use shepherd_core::classify::{classify, rebuild_ledger_from_markers, Class, Classified, ItemKind};
use shepherd_core::target::Target;
use shepherd_core::{AuthorKind, Ledger, PrSnapshot};

use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::forge_setup::{connect, resolve_target, runtime, ForgeArgs};
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
    items: &'a [Classified],
}

#[derive(Debug, Default, Serialize)]
struct Counts {
    new: usize,
    resolve_retry: usize,
    awaiting_reviewer: usize,
}

impl Counts {
    fn of(items: &[Classified]) -> Self {
        let mut counts = Counts::default();
        for item in items {
            match item.class {
                Class::New => counts.new += 1,
                Class::ResolveRetry => counts.resolve_retry += 1,
                Class::AwaitingReviewer => counts.awaiting_reviewer += 1,
            }
        }
        counts
    }
}

pub(crate) fn cmd_threads(args: ThreadsArgs) -> CliResult<u8> {
    let target = resolve_target(&args.target, &args.forge)?;
    let forge = connect(&target, &args.forge)?;
    let snapshot: PrSnapshot = runtime()?
        .block_on(forge.snapshot(target.number))
        .map_err(CliError::failure)?;

    // No state store yet: the ledger is what Shepherd's markers on the PR say.
    let ledger: Ledger = rebuild_ledger_from_markers(&snapshot, &snapshot.viewer)
        .into_iter()
        .collect();
    let mut items = classify(&snapshot, &ledger);
    if let shepherd_core::target::Mode::Targeted(selected) = target.mode {
        items.retain(|item| targeted_matches(&snapshot, item, selected));
    }

    let counts = Counts::of(&items);
    if args.json {
        let report = ThreadsReport {
            target: &target,
            viewer: &snapshot.viewer,
            pr: &snapshot.pr,
            counts,
            items: &items,
        };
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::failure(anyhow::anyhow!(e)))?;
        println!("{text}");
    } else {
        print_text(&target, &snapshot, &items, &counts);
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

fn print_text(target: &Target, snapshot: &PrSnapshot, items: &[Classified], counts: &Counts) {
    let style = Style::stdout();
    let pr = &snapshot.pr;
    let short_sha: String = pr.head_sha.chars().take(7).collect();
    println!(
        "{} {}",
        style.bold(&format!("{target}")),
        style.dim(&format!("\"{}\"", pr.title))
    );
    println!(
        "  state {:?}, head {} at {}, base {}, viewer @{}{}{}",
        pr.state,
        pr.head_ref,
        short_sha,
        pr.base_ref,
        snapshot.viewer,
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
    println!(
        "  {} items: {} new, {} awaiting reviewer, {} resolve-retry",
        items.len(),
        counts.new,
        counts.awaiting_reviewer,
        counts.resolve_retry
    );
    for item in items {
        let class = match item.class {
            Class::New => style.yellow("new"),
            Class::ResolveRetry => style.cyan("resolve-retry"),
            Class::AwaitingReviewer => style.green("awaiting-reviewer"),
        };
        let location = match (&item.path, item.line) {
            (Some(path), Some(line)) => format!("{path}:{line}"),
            (Some(path), None) => path.clone(),
            (None, _) => format!("({})", kind_label(item.kind)),
        };
        let author = match &item.author {
            Some(a) if a.kind == AuthorKind::Bot => format!("@{} [bot]", a.login),
            Some(a) => format!("@{}", a.login),
            None => "@ghost".to_owned(),
        };
        println!();
        println!(
            "{class}  {}  {}  {}{}",
            style.bold(&location),
            author,
            style.dim(&item.item_id),
            if item.outdated { "  (outdated)" } else { "" }
        );
        println!("    {}", item.reason);
    }
}

fn kind_label(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::ReviewThread => "review thread",
        ItemKind::IssueComment => "PR comment",
        ItemKind::ReviewBody => "review body",
    }
}
