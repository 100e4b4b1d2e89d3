//! `Query.search` for pull requests (`type: ISSUE`), as `gh pr status`
//! and `gh pr list --search` use it, with GitHub's search qualifiers the
//! emulator can answer: `repo:`, `is:pr`/`is:issue`, `is:`/`state:`
//! `open`/`closed`/`merged`, `draft:`, `author:` (`@me` too), `label:`,
//! `head:`, `base:`; `review-requested:`, `assignee:`, `mentions:` and
//! `team-review-requested:` match nothing (the emulator has none of those);
//! any other qualifier matches nothing too, and words without one must
//! all occur in the title or body (case-insensitively). Newest first.

use async_graphql::{Context, Enum, Result, SimpleObject, Union};

use super::connection::{paginate, PageArgs, PageInfo};
use super::objects::PullRequest;
use super::view::{PrView, RequestContext};
use crate::scenario::PullRequestStatus;
use crate::state::{PullRequestRecord, State};

/// Represents the individual results of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum SearchType {
    /// Returns matching discussions in repositories.
    Discussion,
    /// Returns results matching issues in repositories.
    Issue,
    /// Returns results matching repositories.
    Repository,
    /// Returns results matching users and organizations on GitHub.
    User,
}

/// The results of a search: pull requests only here.
#[derive(Clone, Union)]
pub(crate) enum SearchResultItem {
    /// A pull request.
    PullRequest(PullRequest),
}

/// An edge in a connection.
#[derive(Clone, SimpleObject)]
pub(crate) struct SearchResultItemEdge {
    /// A cursor for use in pagination.
    cursor: String,
    /// The item at the end of the edge.
    node: Option<SearchResultItem>,
}

/// A list of results that matched against a search query.
#[derive(SimpleObject)]
pub(crate) struct SearchResultItemConnection {
    /// A list of edges.
    edges: Option<Vec<Option<SearchResultItemEdge>>>,
    /// The total number of issues that matched the search query.
    issue_count: i32,
    /// A list of nodes.
    nodes: Option<Vec<Option<SearchResultItem>>>,
    /// Information to aid in pagination.
    page_info: PageInfo,
}

/// Whether `pr` matches every term of `query` for `viewer`.
fn matches(state: &State, pr: &PullRequestRecord, query: &str, viewer: &str) -> bool {
    query.split_whitespace().all(|term| {
        let Some((key, value)) = term.split_once(':') else {
            let word = term.to_lowercase();
            return pr.title.to_lowercase().contains(&word)
                || pr.body.to_lowercase().contains(&word);
        };
        let value = value.trim_matches('"');
        let is = |status: PullRequestStatus| pr.status == status;
        match (key, value) {
            ("repo", name) => name.eq_ignore_ascii_case(&state.repository.full_name()),
            ("is" | "type", "pr") => true,
            ("is" | "type", "issue") => false,
            ("is" | "state", "open") => is(PullRequestStatus::Open),
            ("is" | "state", "closed") => !is(PullRequestStatus::Open),
            ("is", "merged") => is(PullRequestStatus::Merged),
            ("is", "unmerged") => !is(PullRequestStatus::Merged),
            ("is", "draft") | ("draft", "true") => pr.draft,
            ("draft", "false") => !pr.draft,
            ("author", "@me") => pr.author == viewer,
            ("author", login) => pr.author.eq_ignore_ascii_case(login),
            ("label", label) => pr.labels.iter().any(|l| l.eq_ignore_ascii_case(label)),
            ("head", branch) => pr.head_ref == branch,
            ("base", branch) => pr.base_ref == branch,
            _ => false,
        }
    })
}

/// The page of pull requests matching `query` (for `type: ISSUE`).
pub(crate) fn search(
    ctx: &Context<'_>,
    query: &str,
    kind: SearchType,
    args: PageArgs,
) -> Result<SearchResultItemConnection> {
    let rc = ctx.data::<RequestContext>()?;
    let items: Vec<(u64, PullRequest)> = {
        let state = rc.shared.read();
        let mut found: Vec<&PullRequestRecord> = match kind {
            SearchType::Issue => state
                .pull_requests
                .iter()
                .filter(|pr| matches(&state, pr, query, &rc.viewer.login))
                .map(|pr| &**pr)
                .collect(),
            _ => Vec::new(),
        };
        found.sort_by_key(|pr| std::cmp::Reverse(pr.database_id));
        found
            .into_iter()
            .filter_map(|pr| PrView::new(&state, pr.number, &rc.viewer, &rc.shared.base_url))
            .enumerate()
            // Cursors are positions in this order (newest first).
            .map(|(i, view)| (i as u64 + 1, PullRequest { view }))
            .collect()
    };
    let page = paginate("search", items, &args.counting_only(ctx))?;
    let edges = page
        .items
        .iter()
        .map(|(cursor, node)| {
            Some(SearchResultItemEdge {
                cursor: cursor.clone(),
                node: Some(SearchResultItem::PullRequest(node.clone())),
            })
        })
        .collect();
    let nodes = page
        .items
        .into_iter()
        .map(|(_, node)| Some(SearchResultItem::PullRequest(node)))
        .collect();
    Ok(SearchResultItemConnection {
        edges: Some(edges),
        issue_count: page.total_count,
        nodes: Some(nodes),
        page_info: page.page_info,
    })
}
