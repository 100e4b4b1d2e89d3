//! `GitHubClient`: the `Forge` of github.com and GitHub Enterprise Server.
//!
//! Reads go through GraphQL with named operations (see `queries`). Threads are
//! paginated on two levels: 100 threads per `ReviewThreads` page, each with its
//! first 100 comments; a thread with more comments gets its further pages
//! through `ThreadComments` (`node(id:)`, after a cursor) and
//! `ThreadCommentsTail` (its last 100), started as soon as the thread page
//! that shows it arrives and run beside the next thread pages. GitHub cannot
//! filter resolved threads, so they are dropped here, and their further
//! comments never fetched. Answers are decoded from their bytes straight into
//! the wire types of `wire`, and each page into the model before the next.
//!
//! The review bodies are the exception: they come from REST pages asked at
//! once (`reviews`), since a pull request has about as many reviews as
//! review comments. The write side lives in `writes` and the CI reads in
//! `checks`; the `Forge` implementation (`forge_impl`) only delegates to
//! them and to the reads here.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::sync::OnceLock;

use futures::channel::mpsc;
use futures::{StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use shepherd_core::model::{Comment, PullRequest, RepoRef, ReviewThread, TopLevelComment};
use url::Url;

use super::endpoints::GitHubEndpoints;
use super::queries::{
    PULL_REQUEST_COMMENTS, PULL_REQUEST_COMMENTS_OP, PULL_REQUEST_STATE, PULL_REQUEST_STATE_OP,
    REVIEW_THREADS, REVIEW_THREADS_OP, THREAD_COMMENTS, THREAD_COMMENTS_OP, THREAD_COMMENTS_TAIL,
    THREAD_COMMENTS_TAIL_OP,
};
use super::wire::{
    self, CommentWire, Connection, IssueCommentsPr, PageInfo, PullRequestStateData, RepositoryData,
    ReviewThreadsPr, ThreadCommentsData,
};
use crate::error::{ForgeError, Result};
use crate::intern::Interner;
use crate::token::Token;
use crate::transport::{Api, ClientConfig, Flavor, Transport, SHARED_IN_FLIGHT};

/// The GitHub client. Cheap to share behind an `Arc`.
pub struct GitHubClient {
    pub(super) repo: RepoRef,
    endpoints: GitHubEndpoints,
    pub(super) transport: Transport,
    /// The viewer's login, learnt from the first `PullRequestState` or `Viewer`
    /// answer (it cannot change for a token).
    pub(super) viewer: OnceLock<String>,
}

impl GitHubClient {
    /// A client for `repo` at `endpoints`, with the default [`ClientConfig`].
    pub fn new(repo: RepoRef, endpoints: GitHubEndpoints, token: Token) -> Result<Self> {
        GitHubClient::with_config(repo, endpoints, token, ClientConfig::default())
    }

    /// A client with explicit HTTP options (timeouts, retries).
    pub fn with_config(
        repo: RepoRef,
        endpoints: GitHubEndpoints,
        token: Token,
        config: ClientConfig,
    ) -> Result<Self> {
        let api = Api {
            flavor: Flavor::GitHub,
            rest: endpoints.rest.clone(),
            graphql: Some(endpoints.graphql.clone()),
        };
        Ok(GitHubClient {
            repo,
            endpoints,
            transport: Transport::new(api, token, config)?,
            viewer: OnceLock::new(),
        })
    }

    /// The endpoints the client talks to.
    pub fn endpoints(&self) -> &GitHubEndpoints {
        &self.endpoints
    }

    /// The client's token (for git credentials; never print `expose()`).
    pub fn token(&self) -> &Token {
        self.transport.token()
    }

    /// A GraphQL query: `document` must hold the operation named `operation`.
    /// Retried on transient failures; returns the answer's `data`.
    pub async fn graphql_query<T: DeserializeOwned>(
        &self,
        operation: &str,
        document: &str,
        variables: Value,
    ) -> Result<T> {
        self.transport.graphql(operation, document, variables).await
    }

    /// A REST GET of `path` (`/repos/o/r/pulls/1`) under the REST base, with
    /// the GitHub media type and API version headers. Retried on transient failures.
    pub async fn rest_get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T> {
        self.transport.rest_get(path, query).await
    }

    /// Every page of a REST list (`per_page=100`, following `Link: rel="next"`).
    pub async fn rest_get_all<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Vec<T>> {
        self.transport.rest_get_all(path, query).await
    }
}

impl fmt::Debug for GitHubClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GitHubClient")
            .field("repo", &self.repo)
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}

/// Runs named GraphQL queries: the transport, or an in-memory fake in tests.
pub(crate) trait GraphQlExec: Sync {
    /// Runs `document` (holding `operation`) and decodes its `data`.
    fn query<T: DeserializeOwned + Send>(
        &self,
        operation: &'static str,
        document: &'static str,
        variables: Value,
    ) -> impl Future<Output = Result<T>> + Send;

    /// As [`GraphQlExec::query`], for the chain a snapshot waits on (the
    /// thread pages): the transport keeps a slot for it
    /// ([`Transport::lead`]).
    fn lead_query<T: DeserializeOwned + Send>(
        &self,
        operation: &'static str,
        document: &'static str,
        variables: Value,
    ) -> impl Future<Output = Result<T>> + Send {
        self.query(operation, document, variables)
    }
}

impl GraphQlExec for Transport {
    fn query<T: DeserializeOwned + Send>(
        &self,
        operation: &'static str,
        document: &'static str,
        variables: Value,
    ) -> impl Future<Output = Result<T>> + Send {
        self.graphql(operation, document, variables)
    }

    async fn lead_query<T: DeserializeOwned + Send>(
        &self,
        operation: &'static str,
        document: &'static str,
        variables: Value,
    ) -> Result<T> {
        self.lead().graphql(operation, document, variables).await
    }
}

/// `…/repos/<owner>/<name>/<tail…>` under the REST base.
pub(crate) fn repo_url(transport: &Transport, repo: &RepoRef, tail: &[&str]) -> Result<Url> {
    let mut segments = vec!["repos", repo.owner.as_str(), repo.name.as_str()];
    segments.extend_from_slice(tail);
    transport.url(&segments)
}

/// The variables of a paginated pull request query.
pub(crate) fn repo_vars(repo: &RepoRef, number: u64, cursor: Option<&str>) -> Value {
    json!({
        "owner": repo.owner,
        "name": repo.name,
        "number": number,
        "cursor": cursor,
    })
}

/// The error for a repository or pull request that resolved to `null`
/// without a GraphQL error.
pub(crate) fn not_found(operation: &str) -> ForgeError {
    ForgeError::NotFound {
        request: format!("GraphQL {operation}"),
        message: "the answer is null".to_owned(),
    }
}

/// The cursor of the next page, if any; a page that claims a successor but
/// names no new cursor is an error rather than an endless loop.
pub(crate) fn next_cursor(
    page: &PageInfo,
    previous: Option<&str>,
    operation: &str,
) -> Result<Option<String>> {
    if !page.has_next_page {
        return Ok(None);
    }
    match page.end_cursor.as_deref() {
        Some(cursor) if Some(cursor) != previous => Ok(Some(cursor.to_owned())),
        _ => Err(ForgeError::Decode {
            request: format!("GraphQL {operation}"),
            message: "hasNextPage is true but endCursor does not advance".into(),
        }),
    }
}

/// The viewer's login and the pull request.
pub(crate) async fn fetch_pull_request<E: GraphQlExec>(
    exec: &E,
    repo: &RepoRef,
    number: u64,
) -> Result<(String, PullRequest)> {
    let data: PullRequestStateData = exec
        .query(
            PULL_REQUEST_STATE_OP,
            PULL_REQUEST_STATE,
            json!({ "owner": repo.owner, "name": repo.name, "number": number }),
        )
        .await?;
    let (viewer, pr) = data.into_parts();
    let pr = pr.ok_or_else(|| not_found(PULL_REQUEST_STATE_OP))?;
    let pr = wire::pull_request(pr, &viewer).map_err(|message| ForgeError::Decode {
        request: format!("GraphQL {PULL_REQUEST_STATE_OP}"),
        message,
    })?;
    Ok((viewer, pr))
}

/// Every node of a pull request's connection, every page: `document`
/// (holding `operation`) is asked with [`repo_vars`], and `connection` picks
/// the connection out of each page's pull request.
async fn pull_request_nodes<E, P, N>(
    exec: &E,
    repo: &RepoRef,
    number: u64,
    operation: &'static str,
    document: &'static str,
    connection: impl Fn(P) -> Connection<N>,
) -> Result<Vec<N>>
where
    E: GraphQlExec,
    P: DeserializeOwned + Send,
{
    let mut nodes = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let data: RepositoryData<P> = exec
            .query(
                operation,
                document,
                repo_vars(repo, number, cursor.as_deref()),
            )
            .await?;
        let page = connection(
            data.into_pull_request()
                .ok_or_else(|| not_found(operation))?,
        );
        let page_info = page.page_info.clone();
        nodes.extend(page.into_nodes());
        match next_cursor(&page_info, cursor.as_deref(), operation)? {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(nodes)
}

/// A long thread whose further comments are still to fetch.
struct Tail {
    /// Its place among the unresolved threads.
    index: usize,
    id: String,
    /// The cursor after its first page.
    after: String,
    /// How many comments the forge counts, if it said.
    total: Option<u64>,
    /// How many came with the first page.
    have: usize,
}

/// Every unresolved thread with every comment.
///
/// The thread pages come one after the other (each needs the cursor of the
/// one before). A long thread's further comments are asked as soon as the
/// page that shows it arrives, beside the next thread pages (see
/// [`fetch_more_comments`]), so a snapshot costs one step more than its
/// thread pages. Each page is turned into the model as it comes and dropped;
/// diff hunks are shared through one [`Interner`].
pub(crate) async fn fetch_review_threads<E: GraphQlExec>(
    exec: &E,
    repo: &RepoRef,
    number: u64,
) -> Result<Vec<ReviewThread>> {
    let hunks = Interner::default();
    let hunks = &hunks;
    let (found, tails) = mpsc::unbounded::<Tail>();
    let pages = async move {
        let mut threads = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let data: RepositoryData<ReviewThreadsPr> = exec
                .lead_query(
                    REVIEW_THREADS_OP,
                    REVIEW_THREADS,
                    repo_vars(repo, number, cursor.as_deref()),
                )
                .await?;
            let page = data
                .into_pull_request()
                .ok_or_else(|| not_found(REVIEW_THREADS_OP))?
                .review_threads;
            let next = next_cursor(&page.page_info, cursor.as_deref(), REVIEW_THREADS_OP)?;
            for wire in page.into_nodes() {
                if wire.is_resolved {
                    continue;
                }
                let first_page = &wire.comments.page_info;
                if let Some(after) = next_cursor(first_page, None, REVIEW_THREADS_OP)? {
                    let tail = Tail {
                        index: threads.len(),
                        id: wire.id.clone(),
                        after,
                        total: wire.comments.total_count,
                        have: wire.comments.nodes.as_ref().map_or(0, Vec::len),
                    };
                    // The receiver lives until this future ends, unless the
                    // tails failed first: then their error is the answer.
                    let _ = found.unbounded_send(tail);
                }
                threads.push(wire::thread(wire, hunks));
            }
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        // Dropping the sender ends the tails' stream.
        drop(found);
        Ok::<_, ForgeError>(threads)
    };
    let tails = tails
        .map(|tail| async move {
            tracing::debug!(
                thread = %tail.id,
                total = ?tail.total,
                "fetching the further comments of a long thread"
            );
            let more =
                fetch_more_comments(exec, &tail.id, tail.after, tail.total, tail.have, hunks)
                    .await?;
            Ok::<_, ForgeError>((tail.index, more))
        })
        .buffer_unordered(SHARED_IN_FLIGHT)
        .try_collect::<Vec<_>>();
    let (mut threads, tails) = tokio::try_join!(pages, tails)?;
    for (index, more) in tails {
        if let Some(thread) = threads.get_mut(index) {
            append_new(&mut thread.comments, more);
        }
    }
    Ok(threads)
}

/// Appends the comments of `more` that `comments` does not hold yet (a
/// comment deleted between two pages shifts the pages under the cursor).
pub(crate) fn append_new(comments: &mut Vec<Comment>, more: Vec<Comment>) {
    let known: HashSet<String> = comments.iter().map(|c| c.id.clone()).collect();
    comments.extend(more.into_iter().filter(|c| !known.contains(&c.id)));
}

/// The comments of thread `id` after cursor `after`, given that the forge
/// counts `total` and the first page held `have`.
///
/// Up to 200 more (a thread of up to about 300) cost one step: the page
/// after the cursor (`first: 100`) and the last page (`last: 100`) are
/// asked at once and joined where they meet. A longer thread pages on from
/// the forward page until it reaches the last page; without a count, the
/// pages are read one after the other.
pub(crate) async fn fetch_more_comments<E: GraphQlExec>(
    exec: &E,
    id: &str,
    after: String,
    total: Option<u64>,
    have: usize,
    hunks: &Interner,
) -> Result<Vec<Comment>> {
    let remaining = total.map(|t| {
        usize::try_from(t)
            .unwrap_or(usize::MAX)
            .saturating_sub(have)
    });
    if remaining.is_none_or(|r| r <= 100) {
        return fetch_thread_comments(exec, id, after, hunks).await;
    }
    let (mut page, last) = tokio::try_join!(
        comments_page(exec, id, THREAD_COMMENTS_OP, THREAD_COMMENTS, Some(&after)),
        comments_page(
            exec,
            id,
            THREAD_COMMENTS_TAIL_OP,
            THREAD_COMMENTS_TAIL,
            None
        ),
    )?;
    let last: Vec<CommentWire> = last.into_nodes().collect();
    let meets: HashSet<&str> = last.iter().map(|c| c.id.as_str()).collect();
    let mut comments = Vec::new();
    let mut cursor = after;
    'pages: loop {
        let info = page.page_info.clone();
        for wire in page.into_nodes() {
            if meets.contains(wire.id.as_str()) {
                break 'pages;
            }
            comments.push(wire::comment(wire, hunks));
        }
        match next_cursor(&info, Some(&cursor), THREAD_COMMENTS_OP)? {
            Some(next) => {
                page = comments_page(exec, id, THREAD_COMMENTS_OP, THREAD_COMMENTS, Some(&next))
                    .await?;
                cursor = next;
            }
            None => break,
        }
    }
    comments.extend(last.into_iter().map(|c| wire::comment(c, hunks)));
    Ok(comments)
}

/// One page of thread `id`'s comments: `document` is [`THREAD_COMMENTS`]
/// (after `cursor`) or [`THREAD_COMMENTS_TAIL`] (the last page).
async fn comments_page<E: GraphQlExec>(
    exec: &E,
    id: &str,
    operation: &'static str,
    document: &'static str,
    cursor: Option<&str>,
) -> Result<Connection<CommentWire>> {
    let data: ThreadCommentsData = exec
        .query(operation, document, json!({ "id": id, "cursor": cursor }))
        .await?;
    data.node
        .and_then(|node| node.comments)
        .ok_or_else(|| ForgeError::Decode {
            request: format!("GraphQL {operation}"),
            message: format!("review thread {id} is gone or is not a review thread"),
        })
}

/// The comments of thread `id` after cursor `after`, every page, in turn.
pub(crate) async fn fetch_thread_comments<E: GraphQlExec>(
    exec: &E,
    id: &str,
    after: String,
    hunks: &Interner,
) -> Result<Vec<Comment>> {
    let mut comments = Vec::new();
    let mut cursor = after;
    loop {
        let connection =
            comments_page(exec, id, THREAD_COMMENTS_OP, THREAD_COMMENTS, Some(&cursor)).await?;
        let page = connection.page_info.clone();
        comments.extend(connection.into_nodes().map(|c| wire::comment(c, hunks)));
        match next_cursor(&page, Some(&cursor), THREAD_COMMENTS_OP)? {
            Some(next) => cursor = next,
            None => break,
        }
    }
    Ok(comments)
}

/// Conversation comments and the review bodies `reviews` reads (see
/// `reviews::fetch_review_bodies`), asked at the same time, oldest first.
pub(crate) async fn fetch_top_level_comments<E: GraphQlExec>(
    exec: &E,
    repo: &RepoRef,
    number: u64,
    reviews: impl Future<Output = Result<Vec<TopLevelComment>>>,
) -> Result<Vec<TopLevelComment>> {
    let (mut comments, reviews) =
        tokio::try_join!(fetch_issue_comments(exec, repo, number), reviews)?;
    comments.extend(reviews);
    // GitHub's timestamps are RFC 3339 in UTC with second precision
    // (`2024-05-02T10:00:00Z`), so text order is time order. The sort is
    // stable: at equal times, conversation comments come first.
    comments.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    Ok(comments)
}

pub(crate) async fn fetch_issue_comments<E: GraphQlExec>(
    exec: &E,
    repo: &RepoRef,
    number: u64,
) -> Result<Vec<TopLevelComment>> {
    let nodes = pull_request_nodes(
        exec,
        repo,
        number,
        PULL_REQUEST_COMMENTS_OP,
        PULL_REQUEST_COMMENTS,
        |pr: IssueCommentsPr| pr.comments,
    )
    .await?;
    Ok(nodes.into_iter().map(wire::issue_comment).collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use shepherd_core::model::{AuthorKind, ReviewState, TopLevelKind};

    use super::*;
    use crate::github::github_fixtures::review_comment;

    /// An in-memory GitHub answering the client's operations with GitHub's
    /// shapes and cursor pagination, counting requests per operation.
    struct FakeGitHub {
        /// Per thread: resolved?, number of comments.
        threads: Vec<(bool, usize)>,
        issue_comments: usize,
        calls: Mutex<HashMap<&'static str, usize>>,
    }

    impl FakeGitHub {
        fn new(threads: Vec<(bool, usize)>) -> Self {
            FakeGitHub {
                threads,
                issue_comments: 0,
                calls: Mutex::new(HashMap::new()),
            }
        }

        fn calls(&self, operation: &str) -> usize {
            self.calls
                .lock()
                .unwrap()
                .get(operation)
                .copied()
                .unwrap_or(0)
        }

        /// `(offset, page)` for a cursor (`"c<offset>"`) and a page of 100.
        fn page(cursor: &Value, len: usize) -> (usize, std::ops::Range<usize>, Value) {
            let start = cursor
                .as_str()
                .map(|c| c.trim_start_matches('c').parse::<usize>().unwrap())
                .unwrap_or(0);
            let end = (start + 100).min(len);
            let info = json!({ "hasNextPage": end < len, "endCursor": format!("c{end}") });
            (start, start..end, info)
        }

        fn comments(thread: usize, total: usize, cursor: &Value) -> Value {
            let (_, range, info) = FakeGitHub::page(cursor, total);
            let nodes: Vec<Value> = range.map(|i| review_comment(thread, i)).collect();
            json!({ "totalCount": total, "pageInfo": info, "nodes": nodes })
        }

        fn answer(&self, operation: &str, vars: &Value) -> Value {
            let pr = |inner: Value| json!({ "repository": { "pullRequest": inner } });
            match operation {
                REVIEW_THREADS_OP => {
                    let (_, range, info) = FakeGitHub::page(&vars["cursor"], self.threads.len());
                    let nodes: Vec<Value> = range
                        .map(|t| {
                            let (resolved, total) = self.threads[t];
                            json!({
                                "id": format!("PRRT_{t}"),
                                "isResolved": resolved,
                                "isOutdated": t % 2 == 1,
                                "path": format!("src/f{t}.rs"),
                                "line": 3, "startLine": null,
                                "originalLine": 3, "originalStartLine": null,
                                "diffSide": "RIGHT", "subjectType": "LINE",
                                "viewerCanReply": true, "viewerCanResolve": true,
                                "comments": FakeGitHub::comments(t, total, &Value::Null),
                            })
                        })
                        .collect();
                    pr(json!({ "reviewThreads": { "pageInfo": info, "nodes": nodes } }))
                }
                THREAD_COMMENTS_TAIL_OP => {
                    let id = vars["id"].as_str().unwrap();
                    let t: usize = id.trim_start_matches("PRRT_").parse().unwrap();
                    let total = self.threads[t].1;
                    let start = total.saturating_sub(100);
                    let nodes: Vec<Value> = (start..total).map(|i| review_comment(t, i)).collect();
                    let info = json!({ "hasNextPage": false, "endCursor": format!("c{total}") });
                    json!({ "node": { "comments": {
                        "totalCount": total, "pageInfo": info, "nodes": nodes
                    } } })
                }
                THREAD_COMMENTS_OP => {
                    let id = vars["id"].as_str().unwrap();
                    let t: usize = id.trim_start_matches("PRRT_").parse().unwrap();
                    let total = self.threads[t].1;
                    json!({ "node": { "comments": FakeGitHub::comments(t, total, &vars["cursor"]) } })
                }
                PULL_REQUEST_COMMENTS_OP => {
                    let (_, range, info) = FakeGitHub::page(&vars["cursor"], self.issue_comments);
                    let nodes: Vec<Value> = range
                        .map(|i| {
                            json!({
                                "id": format!("IC_{i}"), "databaseId": i, "body": format!("issue {i}"),
                                "url": "u", "createdAt": format!("2024-05-02T10:{:02}:{:02}Z", i / 60, i % 60),
                                "author": { "__typename": "User", "login": "u" },
                            })
                        })
                        .collect();
                    pr(json!({ "comments": { "pageInfo": info, "nodes": nodes } }))
                }
                other => panic!("unexpected operation {other}"),
            }
        }
    }

    impl GraphQlExec for FakeGitHub {
        fn query<T: DeserializeOwned + Send>(
            &self,
            operation: &'static str,
            _document: &'static str,
            variables: Value,
        ) -> impl Future<Output = Result<T>> + Send {
            *self.calls.lock().unwrap().entry(operation).or_default() += 1;
            let answer = self.answer(operation, &variables);
            async move { Ok(serde_json::from_value(answer).unwrap()) }
        }
    }

    fn repo() -> RepoRef {
        RepoRef {
            host: "github.com".into(),
            owner: "o".into(),
            name: "r".into(),
        }
    }

    #[tokio::test]
    async fn two_level_pagination_costs_three_thread_pages_and_one_comment_page() {
        let mut threads = vec![(false, 1); 250];
        threads[7] = (false, 130);
        let fake = FakeGitHub::new(threads);
        let got = fetch_review_threads(&fake, &repo(), 1).await.unwrap();
        assert_eq!(fake.calls(REVIEW_THREADS_OP), 3);
        assert_eq!(fake.calls(THREAD_COMMENTS_OP), 1);
        assert_eq!(got.len(), 250);
        let long = &got[7];
        assert_eq!(long.comments.len(), 130);
        let ids: Vec<&str> = long.comments.iter().map(|c| c.id.as_str()).collect();
        let want: Vec<String> = (0..130).map(|i| format!("PRRC_7_{i}")).collect();
        assert_eq!(ids, want, "every comment, oldest first, no duplicate");
        assert_eq!(
            long.comments[0].author.as_ref().unwrap().kind,
            AuthorKind::Bot
        );
        assert_eq!(long.comments[0].review_state, Some(ReviewState::Commented));
        assert!(
            got.iter().any(|t| t.is_outdated),
            "outdated threads are kept"
        );
    }

    #[tokio::test]
    async fn a_thread_of_250_comments_takes_one_further_step_of_two_pages() {
        let fake = FakeGitHub::new(vec![(false, 250)]);
        let got = fetch_review_threads(&fake, &repo(), 1).await.unwrap();
        assert_eq!(fake.calls(REVIEW_THREADS_OP), 1);
        assert_eq!(
            fake.calls(THREAD_COMMENTS_OP),
            1,
            "the page after the first"
        );
        assert_eq!(
            fake.calls(THREAD_COMMENTS_TAIL_OP),
            1,
            "the last page, at once"
        );
        let ids: Vec<&str> = got[0].comments.iter().map(|c| c.id.as_str()).collect();
        let want: Vec<String> = (0..250).map(|i| format!("PRRC_0_{i}")).collect();
        assert_eq!(ids, want, "every comment once, oldest first");
    }

    #[tokio::test]
    async fn a_thread_of_450_comments_pages_forward_until_it_meets_the_last_page() {
        let fake = FakeGitHub::new(vec![(false, 450), (false, 180)]);
        let got = fetch_review_threads(&fake, &repo(), 1).await.unwrap();
        // 450: forward pages at 100, 200, 300 (which meets the last page at
        // 350) and the last page; 180: one page after the first, no tail.
        assert_eq!(fake.calls(THREAD_COMMENTS_OP), 4);
        assert_eq!(fake.calls(THREAD_COMMENTS_TAIL_OP), 1);
        let ids: Vec<&str> = got[0].comments.iter().map(|c| c.id.as_str()).collect();
        let want: Vec<String> = (0..450).map(|i| format!("PRRC_0_{i}")).collect();
        assert_eq!(ids, want);
        assert_eq!(got[1].comments.len(), 180);
        assert_eq!(got[1].comments[179].id, "PRRC_1_179");
    }

    #[tokio::test]
    async fn diff_hunks_are_shared_across_comments_and_threads() {
        let fake = FakeGitHub::new(vec![(false, 3), (false, 2)]);
        let got = fetch_review_threads(&fake, &repo(), 1).await.unwrap();
        let first = got[0].comments[0].diff_hunk.as_ref().unwrap();
        for comment in got.iter().flat_map(|t| &t.comments) {
            let hunk = comment.diff_hunk.as_ref().unwrap();
            assert!(std::sync::Arc::ptr_eq(first, hunk), "one copy of the hunk");
        }
    }

    #[tokio::test]
    async fn resolved_threads_are_dropped_without_fetching_their_comments() {
        let fake = FakeGitHub::new(vec![(true, 130), (false, 2), (true, 1)]);
        let got = fetch_review_threads(&fake, &repo(), 1).await.unwrap();
        assert_eq!(fake.calls(THREAD_COMMENTS_OP), 0);
        let ids: Vec<&str> = got.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["PRRT_1"]);
        assert_eq!(got[0].comments.len(), 2);
    }

    #[tokio::test]
    async fn top_level_comments_merge_oldest_first() {
        let mut fake = FakeGitHub::new(Vec::new());
        fake.issue_comments = 150;
        // Review bodies as `reviews::fetch_review_bodies` gives them, in the
        // forge's order, each at an odd second.
        let reviews: Vec<TopLevelComment> = [
            ("PRR_0", ReviewState::ChangesRequested, 1),
            ("PRR_4", ReviewState::Approved, 9),
        ]
        .into_iter()
        .map(|(id, state, second)| TopLevelComment {
            id: id.into(),
            database_id: None,
            kind: TopLevelKind::ReviewBody,
            author: None,
            body: "b".into(),
            url: "u".into(),
            created_at: format!("2024-05-02T10:00:{second:02}Z"),
            review_state: Some(state),
        })
        .collect();
        let got = fetch_top_level_comments(&fake, &repo(), 1, async { Ok(reviews) })
            .await
            .unwrap();
        assert_eq!(fake.calls(PULL_REQUEST_COMMENTS_OP), 2);
        assert_eq!(got.len(), 152);
        let reviews: Vec<&TopLevelComment> = got
            .iter()
            .filter(|c| c.kind == TopLevelKind::ReviewBody)
            .collect();
        assert_eq!(reviews.len(), 2);
        assert_eq!(reviews[0].review_state, Some(ReviewState::ChangesRequested));
        assert_eq!(reviews[1].review_state, Some(ReviewState::Approved));
        assert!(got.windows(2).all(|w| w[0].created_at <= w[1].created_at));
        // Review 0 was created at :01, between issue comments 1 (:01, first
        // at equal times) and 2 (:02).
        assert_eq!(got[1].id, "IC_1");
        assert_eq!(got[2].id, "PRR_0");
    }

    #[test]
    fn a_cursor_that_does_not_advance_is_an_error() {
        let page = PageInfo {
            has_next_page: true,
            end_cursor: Some("c1".into()),
        };
        assert!(next_cursor(&page, Some("c1"), "X").is_err());
        let page = PageInfo {
            has_next_page: true,
            end_cursor: None,
        };
        assert!(next_cursor(&page, None, "X").is_err());
    }
}
