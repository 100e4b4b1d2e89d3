//! The write side of the GitLab client: replies as notes on a discussion
//! (read back through the discussion), merge request notes, the marker
//! look-up that keeps replies from doubling, resolves, and merge request
//! edits and labels.
//!
//! Every mutation is sent once (resent only after a rate-limit refusal).
//! A resolve is never sent for a discussion that is already resolved: GitLab
//! answers a repeated `resolved=true` with success and records it again (a
//! duplicate system note), so the discussion is read first, every time.

use reqwest::Method;
use serde_json::{Map, Value};
use shepherd_core::marker::Marker;

use super::client::GitLabClient;
use super::discussions::note_url;
use super::wire::{DiscussionWire, NoteWire, UserWire};
use crate::error::{ForgeError, Result};
use crate::forge::{edit_fields, ItemRef, PostedComment, ThreadRef};
use crate::transport::{decode_json, Conditional};

/// `GET …/merge_requests/:iid/discussions/:id`.
async fn fetch_discussion(
    client: &GitLabClient,
    iid: u64,
    discussion_id: &str,
) -> Result<DiscussionWire> {
    let url = client.mr_url(iid, &["discussions", discussion_id])?;
    client.transport.get(&url, &[], Conditional::No).await
}

/// Posts the reply as a note on the discussion, then reads the discussion
/// back: the note must be in it.
pub(crate) async fn reply_to_thread(
    client: &GitLabClient,
    iid: u64,
    thread: &ThreadRef,
    body: &str,
) -> Result<PostedComment> {
    let url = client.mr_url(iid, &["discussions", &thread.thread_id, "notes"])?;
    let request = format!("POST {}", url.path());
    let created: NoteWire = client.transport.post_body(&url, body).await?;
    tracing::info!(
        thread = %thread.thread_id,
        note = created.id,
        "reply posted; reading it back"
    );
    client.learn(&thread.thread_id, iid);
    let discussion = match fetch_discussion(client, iid, &thread.thread_id).await {
        Ok(discussion) => discussion,
        Err(ForgeError::NotFound { .. }) => {
            return Err(ForgeError::Unconfirmed {
                request,
                what: format!(
                    "discussion {} cannot be read back to find the reply {}",
                    thread.thread_id, created.id
                ),
            })
        }
        Err(err) => return Err(err),
    };
    let Some(read) = discussion.notes.into_iter().find(|n| n.id == created.id) else {
        return Err(ForgeError::Unconfirmed {
            request,
            what: format!(
                "the reply {} is not in discussion {}",
                created.id, thread.thread_id
            ),
        });
    };
    let url = note_url(&client.mr_web_url(iid), read.id);
    Ok(read.into_posted(url))
}

/// Posts `body` as a note of the merge request (the reply to a top-level item).
pub(crate) async fn post_note(
    client: &GitLabClient,
    iid: u64,
    body: &str,
) -> Result<PostedComment> {
    let url = client.mr_url(iid, &["notes"])?;
    let created: NoteWire = client.transport.post_body(&url, body).await?;
    tracing::info!(note = created.id, "merge request note posted");
    let url = note_url(&client.mr_web_url(iid), created.id);
    Ok(created.into_posted(url))
}

/// The latest note of the viewer carrying the marker for `item`: in the
/// discussion for a thread, among the merge request's notes for a top-level
/// item. Anyone else's note is never Shepherd's reply, whatever marker it
/// carries: a pasted marker must not pass for a reply that was posted.
pub(crate) async fn find_marker_reply(
    client: &GitLabClient,
    iid: u64,
    item: &ItemRef,
    viewer: &str,
) -> Result<Option<PostedComment>> {
    Ok(find_marker_replies(client, iid, item, viewer).await?.pop())
}

/// Every note of the viewer carrying the marker for `item`, oldest first,
/// where [`find_marker_reply`] looks.
pub(crate) async fn find_marker_replies(
    client: &GitLabClient,
    iid: u64,
    item: &ItemRef,
    viewer: &str,
) -> Result<Vec<PostedComment>> {
    let notes: Vec<NoteWire> = match item {
        ItemRef::Thread(id) => {
            let discussion = fetch_discussion(client, iid, id).await?;
            client.learn(id, iid);
            discussion.notes
        }
        ItemRef::TopLevel(_) => {
            let url = client.mr_url(iid, &["notes"])?;
            let query = [("sort", "asc"), ("order_by", "created_at")];
            let pages: Vec<Vec<NoteWire>> = client
                .transport
                .get_pages(&url, &query, Conditional::No)
                .await?;
            pages.into_iter().flatten().collect()
        }
    };
    let web_url = client.mr_web_url(iid);
    Ok(notes
        .into_iter()
        .filter(|n| !n.system)
        .filter(|n| {
            let author = n.author.as_ref().map(UserWire::author);
            Marker::is_own_for(&n.body, author.as_ref(), viewer, item.id())
        })
        .map(|n| {
            let url = note_url(&web_url, n.id);
            n.into_posted(url)
        })
        .collect())
}

/// `DELETE …/merge_requests/:iid/notes/:note_id`, for a note of a
/// discussion as for a note of the merge request; a 404 (gone already) is
/// success.
pub(crate) async fn delete_note(client: &GitLabClient, iid: u64, note_id: u64) -> Result<()> {
    let id = note_id.to_string();
    let url = client.mr_url(iid, &["notes", &id])?;
    match client.transport.send(Method::DELETE, &url, None).await {
        Ok(_) => {
            tracing::info!(note = note_id, mr = iid, "note deleted");
            Ok(())
        }
        Err(ForgeError::NotFound { .. }) => {
            tracing::info!(note = note_id, "note already gone");
            Ok(())
        }
        Err(err) => Err(err),
    }
}

/// Resolves discussion `id` unless it is resolved already; after a
/// transient failure, reads it again and resolves once more only if it is
/// still unresolved.
pub(crate) async fn resolve_discussion(client: &GitLabClient, iid: u64, id: &str) -> Result<()> {
    if resolved_or_refused(client, iid, id).await? {
        return Ok(());
    }
    match resolve_once(client, iid, id).await {
        Ok(()) => Ok(()),
        Err(err) if err.is_transient() => {
            tracing::warn!(
                discussion = id,
                "{err}; checking whether the resolve landed"
            );
            if resolved_or_refused(client, iid, id).await? {
                return Ok(());
            }
            resolve_once(client, iid, id).await
        }
        Err(err) => Err(err),
    }
}

/// Whether discussion `id` is resolved already; an error when it cannot be
/// resolved at all.
async fn resolved_or_refused(client: &GitLabClient, iid: u64, id: &str) -> Result<bool> {
    let discussion = fetch_discussion(client, iid, id).await?;
    if !discussion.is_resolvable() {
        return Err(ForgeError::CannotResolve {
            thread: id.to_owned(),
            reason: "the discussion is not a resolvable thread; nothing was sent".into(),
        });
    }
    if discussion.is_resolved() {
        tracing::info!(discussion = id, "already resolved; not resolving again");
        return Ok(true);
    }
    Ok(false)
}

async fn resolve_once(client: &GitLabClient, iid: u64, id: &str) -> Result<()> {
    let url = client.mr_url(iid, &["discussions", id])?;
    let request = format!("PUT {}", url.path());
    let answer = client
        .transport
        .send_with_query(Method::PUT, &url, &[("resolved", "true")], None)
        .await?;
    let discussion: DiscussionWire = decode_json(&request, &answer.body)?;
    if discussion.is_resolved() {
        tracing::info!(discussion = id, "discussion resolved");
        Ok(())
    } else {
        Err(ForgeError::Unconfirmed {
            request,
            what: format!("discussion {id} is not resolved in the answer"),
        })
    }
}

/// `PUT …/merge_requests/:iid` with the fields given.
async fn put_merge_request(
    client: &GitLabClient,
    iid: u64,
    fields: Map<String, Value>,
) -> Result<()> {
    let url = client.mr_url(iid, &[])?;
    client
        .transport
        .send(Method::PUT, &url, Some(&Value::Object(fields)))
        .await?;
    Ok(())
}

/// Sets the title and/or the description.
pub(crate) async fn update_merge_request(
    client: &GitLabClient,
    iid: u64,
    title: Option<&str>,
    body: Option<&str>,
) -> Result<()> {
    let fields = edit_fields(title, body, "description");
    if fields.is_empty() {
        return Ok(());
    }
    put_merge_request(client, iid, fields).await?;
    tracing::info!(mr = iid, "merge request edited");
    Ok(())
}

/// `add_labels` on the merge request (labels already there stay).
pub(crate) async fn add_labels(client: &GitLabClient, iid: u64, labels: &[String]) -> Result<()> {
    if labels.is_empty() {
        return Ok(());
    }
    for label in labels {
        check_label(label)?;
    }
    let mut fields = Map::new();
    fields.insert("add_labels".into(), Value::from(labels.join(",")));
    put_merge_request(client, iid, fields).await
}

/// `remove_labels` on the merge request; a label already absent is fine
/// (GitLab ignores it).
pub(crate) async fn remove_label(client: &GitLabClient, iid: u64, label: &str) -> Result<()> {
    check_label(label)?;
    let mut fields = Map::new();
    fields.insert("remove_labels".into(), Value::from(label));
    put_merge_request(client, iid, fields).await
}

/// GitLab takes label lists comma-separated, and its label names cannot
/// hold a comma; an empty name would mean nothing.
fn check_label(label: &str) -> Result<()> {
    if label.trim().is_empty() || label.contains(',') {
        return Err(ForgeError::InvalidEndpoint {
            input: format!("label `{label}`"),
            reason: "a GitLab label name cannot be empty or contain a comma".into(),
        });
    }
    Ok(())
}
