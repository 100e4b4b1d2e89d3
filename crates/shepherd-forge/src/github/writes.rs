//! The write side of the GitHub client: replies (read back), the marker
//! look-up that keeps replies from doubling, resolves, PR edits and labels.
//!
//! Every mutation goes through the transport once (resent only after a
//! rate-limit refusal). A reply whose answer is lost may have landed: the
//! engine calls `find_marker_reply` before posting it again. A resolve is
//! idempotent on GitHub, so after a transient failure the thread is re-read
//! and the resolve sent once more if it is still unresolved.

use reqwest::Method;
use serde_json::{json, Value};
use shepherd_core::marker::Marker;
use shepherd_core::model::{Comment, RepoRef};

use super::client::{
    append_new, fetch_issue_comments, fetch_more_comments, next_cursor, repo_url, GraphQlExec,
};
use super::queries::{
    RESOLVE_REVIEW_THREAD, RESOLVE_REVIEW_THREAD_OP, THREAD_BY_ID, THREAD_BY_ID_OP,
};
use super::rest_wire::{IssueCommentRest, ReviewCommentRest, ReviewRest};
use super::wire::{self, ResolveData, ThreadByIdData};
use crate::error::{ForgeError, Result};
use crate::forge::{edit_fields, ItemRef, PostedComment, ThreadRef};
use crate::intern::Interner;
use crate::transport::{Conditional, Transport};

/// A review thread as `ThreadById` sees it.
pub(crate) struct ThreadState {
    pub(crate) is_resolved: bool,
    /// The comments of the first page, or all of them (see [`fetch_thread`]).
    pub(crate) comments: Vec<Comment>,
}

/// Thread `id`, resolved or not; with `all_comments`, every page of its
/// comments, else the first 100.
pub(crate) async fn fetch_thread<E: GraphQlExec>(
    exec: &E,
    id: &str,
    all_comments: bool,
) -> Result<ThreadState> {
    let data: ThreadByIdData = exec
        .query(THREAD_BY_ID_OP, THREAD_BY_ID, json!({ "id": id }))
        .await?;
    let node = data.node.ok_or_else(|| ForgeError::NotFound {
        request: format!("GraphQL {THREAD_BY_ID_OP}"),
        message: format!("no review thread {id}"),
    })?;
    let (Some(is_resolved), Some(connection)) = (node.is_resolved, node.comments) else {
        return Err(ForgeError::Decode {
            request: format!("GraphQL {THREAD_BY_ID_OP}"),
            message: format!(
                "{id} is a {}, not a review thread",
                node.typename.as_deref().unwrap_or("node of unknown type")
            ),
        });
    };
    let first_page = connection.page_info.clone();
    let total = connection.total_count;
    let hunks = Interner::default();
    let mut comments: Vec<Comment> = connection
        .into_nodes()
        .map(|c| wire::comment(c, &hunks))
        .collect();
    if all_comments {
        if let Some(after) = next_cursor(&first_page, None, THREAD_BY_ID_OP)? {
            let have = comments.len();
            let more = fetch_more_comments(exec, id, after, total, have, &hunks).await?;
            append_new(&mut comments, more);
        }
    }
    Ok(ThreadState {
        is_resolved,
        comments,
    })
}

/// Posts the reply, then reads it back and checks the state of its review.
pub(crate) async fn reply_to_thread(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
    thread: &ThreadRef,
    body: &str,
) -> Result<PostedComment> {
    let number = number.to_string();
    let root = thread.root_comment_id.to_string();
    let url = repo_url(
        transport,
        repo,
        &["pulls", &number, "comments", &root, "replies"],
    )?;
    let request = format!("POST {}", url.path());
    let created: ReviewCommentRest = transport.post_body(&url, body).await?;
    tracing::info!(
        thread = %thread.thread_id,
        comment = created.id,
        "reply posted; reading it back"
    );

    let id = created.id.to_string();
    let read_url = repo_url(transport, repo, &["pulls", "comments", &id])?;
    let read: ReviewCommentRest = match transport.get(&read_url, &[], Conditional::No).await {
        Ok(read) => read,
        Err(ForgeError::NotFound { .. }) => {
            return Err(ForgeError::Unconfirmed {
                request,
                what: format!("the reply {id} cannot be read back"),
            })
        }
        Err(err) => return Err(err),
    };
    if let Some(parent) = read.in_reply_to_id {
        if parent != thread.root_comment_id {
            return Err(ForgeError::Unconfirmed {
                request,
                what: format!(
                    "the reply {id} answers comment {parent}, not the thread's root {root}"
                ),
            });
        }
    }
    let review_state = match read.pull_request_review_id {
        None => None,
        Some(review_id) => {
            let review_id_text = review_id.to_string();
            let review_url = repo_url(
                transport,
                repo,
                &["pulls", &number, "reviews", &review_id_text],
            )?;
            let review: ReviewRest = transport.get(&review_url, &[], Conditional::No).await?;
            if review.state.eq_ignore_ascii_case("PENDING") {
                return Err(ForgeError::ReplyInPendingReview {
                    request,
                    comment_id: read.id,
                    review_id,
                });
            }
            wire::review_state(&review.state.to_ascii_uppercase())
        }
    };
    Ok(read.into_posted(review_state))
}

/// Posts a conversation comment.
pub(crate) async fn post_issue_comment(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
    body: &str,
) -> Result<PostedComment> {
    let number = number.to_string();
    let url = repo_url(transport, repo, &["issues", &number, "comments"])?;
    let created: IssueCommentRest = transport.post_body(&url, body).await?;
    tracing::info!(comment = created.id, "conversation comment posted");
    Ok(created.into_posted())
}

/// The latest comment of `viewer` carrying the marker for `item`. Anyone
/// else's comment is never Shepherd's reply, whatever marker it carries: a
/// pasted marker must not pass for a reply that was posted.
pub(crate) async fn find_marker_reply<E: GraphQlExec>(
    exec: &E,
    repo: &RepoRef,
    number: u64,
    item: &ItemRef,
    viewer: &str,
) -> Result<Option<PostedComment>> {
    Ok(find_marker_replies(exec, repo, number, item, viewer)
        .await?
        .pop())
}

/// Shepherd's own comments among `$comments` (review [`Comment`]s or
/// [`TopLevelComment`](shepherd_core::model::TopLevelComment)s: the same
/// fields), for item `$id` as `$viewer`, as read back: the marker found in
/// each body.
macro_rules! own_posted {
    ($comments:expr, $viewer:expr, $id:expr) => {
        $comments
            .into_iter()
            .filter(|c| Marker::is_own_for(&c.body, c.author.as_ref(), $viewer, $id))
            .map(|c| PostedComment {
                marker: Marker::find(&c.body),
                id: c.id,
                database_id: c.database_id,
                url: c.url,
                review_state: c.review_state,
                author: c.author,
            })
            .collect()
    };
}

/// Every comment of `viewer` carrying the marker for `item`, oldest first:
/// in the thread for a thread, among the conversation comments otherwise.
pub(crate) async fn find_marker_replies<E: GraphQlExec>(
    exec: &E,
    repo: &RepoRef,
    number: u64,
    item: &ItemRef,
    viewer: &str,
) -> Result<Vec<PostedComment>> {
    match item {
        ItemRef::Thread(id) => {
            let thread = fetch_thread(exec, id, true).await?;
            Ok(own_posted!(thread.comments, viewer, id))
        }
        ItemRef::TopLevel(id) => {
            let comments = fetch_issue_comments(exec, repo, number).await?;
            Ok(own_posted!(comments, viewer, id))
        }
    }
}

/// `DELETE /repos/{o}/{r}/pulls/comments/{id}` (a reply in a thread) or
/// `DELETE /repos/{o}/{r}/issues/comments/{id}` (a conversation comment);
/// a 404 (gone already) is success.
pub(crate) async fn delete_comment(
    transport: &Transport,
    repo: &RepoRef,
    item: &ItemRef,
    comment_id: u64,
) -> Result<()> {
    let id = comment_id.to_string();
    let kind = match item {
        ItemRef::Thread(_) => "pulls",
        ItemRef::TopLevel(_) => "issues",
    };
    let url = repo_url(transport, repo, &[kind, "comments", &id])?;
    match transport.send(Method::DELETE, &url, None).await {
        Ok(_) => {
            tracing::info!(comment = comment_id, item = item.id(), "comment deleted");
            Ok(())
        }
        Err(ForgeError::NotFound { .. }) => {
            tracing::info!(comment = comment_id, "comment already gone");
            Ok(())
        }
        Err(err) => Err(err),
    }
}

/// Resolves `thread_id`: once, and once more after a transient failure if
/// the thread is still unresolved.
pub(crate) async fn resolve_thread(transport: &Transport, thread_id: &str) -> Result<()> {
    match resolve_once(transport, thread_id).await {
        Ok(()) => Ok(()),
        Err(err) if err.is_transient() => {
            tracing::warn!(
                thread = thread_id,
                "{err}; checking whether the resolve landed"
            );
            if fetch_thread(transport, thread_id, false).await?.is_resolved {
                return Ok(());
            }
            resolve_once(transport, thread_id).await
        }
        Err(err) => Err(err),
    }
}

async fn resolve_once(transport: &Transport, thread_id: &str) -> Result<()> {
    let data: ResolveData = transport
        .graphql_mutation(
            RESOLVE_REVIEW_THREAD_OP,
            RESOLVE_REVIEW_THREAD,
            json!({ "threadId": thread_id }),
        )
        .await?;
    match data.resolve_review_thread.and_then(|p| p.thread) {
        Some(thread) if thread.is_resolved => {
            tracing::info!(thread = thread_id, "thread resolved");
            Ok(())
        }
        _ => Err(ForgeError::Unconfirmed {
            request: format!("GraphQL {RESOLVE_REVIEW_THREAD_OP}"),
            what: format!("thread {thread_id} is not resolved in the answer"),
        }),
    }
}

/// `PATCH /repos/{o}/{r}/pulls/{n}` with the fields given.
pub(crate) async fn update_pull_request(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
    title: Option<&str>,
    body: Option<&str>,
) -> Result<()> {
    let fields = edit_fields(title, body, "body");
    if fields.is_empty() {
        return Ok(());
    }
    let number = number.to_string();
    let url = repo_url(transport, repo, &["pulls", &number])?;
    transport
        .send(Method::PATCH, &url, Some(&Value::Object(fields)))
        .await?;
    tracing::info!(pr = %number, "pull request edited");
    Ok(())
}

/// `POST /repos/{o}/{r}/issues/{n}/labels`.
pub(crate) async fn add_labels(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
    labels: &[String],
) -> Result<()> {
    if labels.is_empty() {
        return Ok(());
    }
    if let Some(bad) = labels.iter().find(|l| l.trim().is_empty()) {
        return Err(empty_label(bad));
    }
    let number = number.to_string();
    let url = repo_url(transport, repo, &["issues", &number, "labels"])?;
    transport
        .send(Method::POST, &url, Some(&json!({ "labels": labels })))
        .await?;
    Ok(())
}

/// `DELETE /repos/{o}/{r}/issues/{n}/labels/{name}`; a 404 (the label is not
/// on the PR) is success.
pub(crate) async fn remove_label(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
    label: &str,
) -> Result<()> {
    // An empty name would make the URL `…/labels`, which removes every label.
    if label.trim().is_empty() {
        return Err(empty_label(label));
    }
    let number = number.to_string();
    let url = repo_url(transport, repo, &["issues", &number, "labels", label])?;
    match transport.send(Method::DELETE, &url, None).await {
        Ok(_) => Ok(()),
        Err(ForgeError::NotFound { .. }) => {
            tracing::debug!(label, "label already absent");
            Ok(())
        }
        Err(err) => Err(err),
    }
}

fn empty_label(label: &str) -> ForgeError {
    ForgeError::InvalidEndpoint {
        input: format!("label `{label}`"),
        reason: "a label name cannot be empty".into(),
    }
}
