//! The JSON fast path of threads, their comments and reviews: for a
//! selection of plain fields the answer is written straight to JSON, as
//! the resolvers would answer it (see `graphql/json.rs`).

use std::borrow::Cow;

use async_graphql::context::QueryEnv;
use async_graphql::parser::types::{Field, SelectionSet};
use async_graphql::registry::Registry;
use async_graphql::resolver_utils::enum_value;
use async_graphql::{ContextSelectionSet, OutputType, Positioned, ServerResult, Value};

use super::common::{actor_info, line_int, small_int};
use super::enums::{DiffSide, PullRequestReviewState, PullRequestReviewThreadSubjectType};
use crate::graphql::connection::{PageArgs, PageInfo, PullRequestReviewCommentConnection};
use crate::graphql::json::{
    argument, plain_fields, write_bool, write_int, write_name, write_object, write_str, FieldsMemo,
    JsonStrings, JsonText,
};
use crate::graphql::objects::{
    CommentNode, PullRequestReview, PullRequestReviewComment, PullRequestReviewThread, ThreadNode,
};
use crate::graphql::view::ActorInfo;
use crate::hunk::DiffHunk;
use crate::scenario::{Permission, Side, UserKind};

/// A node written straight to JSON when its selection allows (`json`),
/// else resolved by async-graphql as the object it wraps: the type name
/// and schema are that object's.
macro_rules! fast_output_type {
    ($node:ty, $object:ty) => {
        impl OutputType for $node {
            fn type_name() -> Cow<'static, str> {
                <$object as OutputType>::type_name()
            }

            fn create_type_info(registry: &mut Registry) -> String {
                <$object as OutputType>::create_type_info(registry)
            }

            async fn resolve(
                &self,
                ctx: &ContextSelectionSet<'_>,
                field: &Positioned<Field>,
            ) -> ServerResult<Value> {
                if let Some(strings) = ctx.data_opt::<JsonStrings>() {
                    if let Some(json) = self.0.json(ctx.query_env, ctx.item) {
                        return Ok(strings.text(json));
                    }
                }
                OutputType::resolve(&self.0, ctx, field).await
            }
        }
    };
}

fast_output_type!(ThreadNode, PullRequestReviewThread);
fast_output_type!(CommentNode, PullRequestReviewComment);

impl PullRequestReviewThread {
    /// This thread as JSON text (see [`Self::write_json`]).
    pub(super) fn json(&self, env: &QueryEnv, set: &Positioned<SelectionSet>) -> Option<JsonText> {
        let mut out = Vec::with_capacity(1024);
        let mut hunks = Vec::new();
        self.write_json(env, set, &mut out, &mut hunks)?;
        Some(JsonText::new(out, hunks))
    }

    /// Writes this thread as JSON, when `set` asks only for fields written
    /// here (those of a page of review threads), with the values the
    /// resolvers above give; its comments' hunks' places go into `hunks`.
    /// `None` (a field not written here, a page of comments that fails):
    /// async-graphql resolves it.
    pub(super) fn write_json(
        &self,
        env: &QueryEnv,
        set: &Positioned<SelectionSet>,
        out: &mut Vec<u8>,
        hunks: &mut Vec<(usize, DiffHunk)>,
    ) -> Option<()> {
        let fields = plain_fields(env, set, "PullRequestReviewThread", &["comments"])?;
        let mut memo = FieldsMemo::default();
        let record = self.record();
        write_object(out, &fields, |out, field| {
            let line = |n: Option<u32>| line_int(n);
            let side = |side: Side| match enum_value(DiffSide::from(side)) {
                Value::Enum(name) => Some(name),
                _ => None,
            };
            match field.name {
                "__typename" => write_str(out, "PullRequestReviewThread"),
                "id" => write_str(out, &record.id),
                "isResolved" | "isCollapsed" => write_bool(out, record.resolved),
                "isOutdated" => write_bool(out, record.outdated),
                "path" => write_str(out, &record.path),
                "line" => write_int(out, line(record.line())),
                "startLine" => write_int(out, line(record.start_line())),
                "originalLine" => write_int(out, line(record.original_line)),
                "originalStartLine" => write_int(out, line(record.original_start_line)),
                "diffSide" => write_name(out, &side(record.side)?),
                "subjectType" => match enum_value(match record.original_line {
                    Some(_) => PullRequestReviewThreadSubjectType::Line,
                    None => PullRequestReviewThreadSubjectType::File,
                }) {
                    Value::Enum(name) => write_name(out, &name),
                    _ => return None,
                },
                "viewerCanReply" => {
                    write_bool(out, self.view.viewer.permission >= Permission::Write)
                }
                "viewerCanResolve" => write_bool(out, !record.resolved && self.viewer_can_toggle()),
                "viewerCanUnresolve" => {
                    write_bool(out, record.resolved && self.viewer_can_toggle())
                }
                "comments" => {
                    let int = |name| match argument(env, field, name)? {
                        Value::Null => Some(None),
                        Value::Number(n) => i32::try_from(n.as_i64()?).ok().map(Some),
                        _ => None,
                    };
                    let text = |name| match argument(env, field, name)? {
                        Value::Null => Some(None),
                        Value::String(s) => Some(Some(s)),
                        _ => None,
                    };
                    let args = PageArgs {
                        first: int("first")?,
                        last: int("last")?,
                        after: text("after")?,
                        before: text("before")?,
                    };
                    // An error is async-graphql's to report, with its path.
                    let page = self.comments_page(&args).ok()?;
                    comments_json(&page, env, field.selection_set, out, hunks, &mut memo)?;
                }
                _ => return None,
            }
            Some(())
        })
    }
}

/// Writes a page of comments for a selection of plain fields (`nodes`, not
/// `edges`).
pub(super) fn comments_json<'a>(
    page: &PullRequestReviewCommentConnection,
    env: &'a QueryEnv,
    set: &'a Positioned<SelectionSet>,
    out: &mut Vec<u8>,
    hunks: &mut Vec<(usize, DiffHunk)>,
    memo: &mut FieldsMemo<'a>,
) -> Option<()> {
    let fields = memo.get(env, set, "PullRequestReviewCommentConnection", &[])?;
    write_object(out, &fields, |out, field| {
        match field.name {
            "__typename" => write_str(out, "PullRequestReviewCommentConnection"),
            "totalCount" => write_int(out, Some(page.total_count)),
            "pageInfo" => page_info_json(&page.page_info, env, field.selection_set, out)?,
            "nodes" => match &page.nodes {
                None => out.extend_from_slice(b"null"),
                Some(nodes) => {
                    out.push(b'[');
                    for (i, node) in nodes.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        match node {
                            None => out.extend_from_slice(b"null"),
                            Some(node) => {
                                node.0
                                    .write_json(env, field.selection_set, out, hunks, memo)?
                            }
                        }
                    }
                    out.push(b']');
                }
            },
            _ => return None,
        }
        Some(())
    })
}

/// Writes a `PageInfo` for a selection of plain fields.
pub(super) fn page_info_json(
    info: &PageInfo,
    env: &QueryEnv,
    set: &Positioned<SelectionSet>,
    out: &mut Vec<u8>,
) -> Option<()> {
    let fields = plain_fields(env, set, "PageInfo", &[])?;
    let cursor = |out: &mut Vec<u8>, cursor: &Option<String>| match cursor {
        Some(cursor) => write_str(out, cursor),
        None => out.extend_from_slice(b"null"),
    };
    write_object(out, &fields, |out, field| {
        match field.name {
            "__typename" => write_str(out, "PageInfo"),
            "hasNextPage" => write_bool(out, info.has_next_page),
            "hasPreviousPage" => write_bool(out, info.has_previous_page),
            "startCursor" => cursor(out, &info.start_cursor),
            "endCursor" => cursor(out, &info.end_cursor),
            _ => return None,
        }
        Some(())
    })
}

impl PullRequestReviewComment {
    /// This comment as JSON text, when `set` asks only for fields written
    /// here (the ones a page of review threads asks for), with the values
    /// the resolvers above give. `None`: async-graphql resolves it.
    pub(super) fn json(&self, env: &QueryEnv, set: &Positioned<SelectionSet>) -> Option<JsonText> {
        let mut out = Vec::with_capacity(512);
        let mut hunks = Vec::new();
        self.write_json(env, set, &mut out, &mut hunks, &mut FieldsMemo::default())?;
        Some(JsonText::new(out, hunks))
    }

    /// Writes [`Self::json`] into `out`, its hunk's place into `hunks`.
    pub(super) fn write_json<'a>(
        &self,
        env: &'a QueryEnv,
        set: &'a Positioned<SelectionSet>,
        out: &mut Vec<u8>,
        hunks: &mut Vec<(usize, DiffHunk)>,
        memo: &mut FieldsMemo<'a>,
    ) -> Option<()> {
        let fields = memo.get(env, set, "PullRequestReviewComment", &[])?;
        let record = self.record();
        write_object(out, &fields, |out, field| {
            match field.name {
                "__typename" => write_str(out, "PullRequestReviewComment"),
                "id" => write_str(out, &record.id),
                "databaseId" => write_int(out, small_int(record.database_id)),
                "body" => write_str(out, &record.body),
                "url" => write_str(out, &self.url_text()),
                "createdAt" => write_str(out, &record.created_at),
                // What `diffHunk` resolves to, made JSON once.
                "diffHunk" => hunks.push((out.len(), record.diff_hunk.clone())),
                "path" => write_str(out, &self.thread_record().path),
                "outdated" => write_bool(out, self.thread_record().outdated),
                "viewerDidAuthor" => write_bool(out, record.author == self.view.viewer.login),
                "author" => match actor_info(&self.view, &record.author) {
                    None => out.extend_from_slice(b"null"),
                    Some(info) => actor_json(out, env, field.selection_set, info, memo)?,
                },
                "pullRequestReview" => match self.review() {
                    None => out.extend_from_slice(b"null"),
                    Some(review) => review.json(out, env, field.selection_set, memo)?,
                },
                _ => return None,
            }
            Some(())
        })
    }
}

/// Writes an `Actor` selection of plain fields, as `actor.rs` resolves them
/// (`Actor::from_info` picks the type).
pub(super) fn actor_json<'a>(
    out: &mut Vec<u8>,
    env: &'a QueryEnv,
    set: &'a Positioned<SelectionSet>,
    info: &ActorInfo,
    memo: &mut FieldsMemo<'a>,
) -> Option<()> {
    let typename = match info.kind {
        UserKind::User => "User",
        UserKind::Bot => "Bot",
    };
    let fields = memo.get(env, set, "Actor", &[])?;
    write_object(out, &fields, |out, field| {
        match field.name {
            "__typename" => write_str(out, typename),
            "login" => write_str(out, &info.login),
            "url" => write_str(out, &info.url),
            "resourcePath" => write_str(out, &info.resource_path),
            _ => return None,
        }
        Some(())
    })
}

impl PullRequestReview {
    /// Writes this review for a selection of plain fields (see
    /// [`PullRequestReviewComment::json`]).
    pub(super) fn json<'a>(
        &self,
        out: &mut Vec<u8>,
        env: &'a QueryEnv,
        set: &'a Positioned<SelectionSet>,
        memo: &mut FieldsMemo<'a>,
    ) -> Option<()> {
        let fields = memo.get(env, set, "PullRequestReview", &[])?;
        let record = self.record();
        write_object(out, &fields, |out, field| {
            match field.name {
                "__typename" => write_str(out, "PullRequestReview"),
                "id" => write_str(out, &record.id),
                "databaseId" => write_int(out, small_int(record.database_id)),
                "body" => write_str(out, &record.body),
                "url" => write_str(out, &self.url_text()),
                "createdAt" => write_str(out, &record.created_at),
                "state" => match enum_value(PullRequestReviewState::from(record.state)) {
                    Value::Enum(name) => write_name(out, &name),
                    _ => return None,
                },
                _ => return None,
            }
            Some(())
        })
    }
}
