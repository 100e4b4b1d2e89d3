//! GitLab's GraphQL API, `POST /api/graphql`, with the one mutation
//! Shepherd sends: `mergeRequestReviewerRereview`, which asks a listed
//! reviewer to review again (GitLab 13.9+,
//! <https://docs.gitlab.com/api/graphql/reference/#mutationmergerequestreviewerrereview>).
//!
//! A schema of its own, apart from the GitHub one in `crate::graphql`: the
//! two APIs share no type. Authenticated as every GitLab route
//! (`PRIVATE-TOKEN` or `Authorization: Bearer`), and counted and open to
//! faults under `POST /api/graphql`.
//!
//! As GitLab answers: a merge request the viewer may not update (or that
//! does not exist), or a user id that names no user, is a top-level error
//! with no payload; a user who is not among the reviewers is the payload's
//! `errors: ["Reviewer not found"]` (GitLab's
//! `MergeRequests::RequestReviewService`).

use std::sync::{Arc, LazyLock};

use async_graphql::{
    Context, EmptySubscription, InputObject, InputValueError, InputValueResult, Object, Scalar,
    ScalarType, Schema, SimpleObject, Value, ID,
};
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::common::{merge_request, GlError, GlReq};
use crate::auth::Viewer;
use crate::scenario::Permission;
use crate::shared::Shared;
use crate::state::WriteError;

/// GitLab's answer to a resource the viewer may not reach, or that does
/// not exist (`Gitlab::Graphql::Authorize::AuthorizeResource`).
const RESOURCE_ACCESS_ERROR: &str = "The resource that you are attempting to access does not \
                                     exist or you don't have permission to perform this action";

type GitLabSchema = Schema<Query, Mutation, EmptySubscription>;

static SCHEMA: LazyLock<GitLabSchema> =
    LazyLock::new(|| Schema::build(Query, Mutation, EmptySubscription).finish());

/// `POST /api/graphql`: the request executed against the GitLab schema,
/// answered `{data, errors}`.
pub(crate) async fn graphql(GlReq(shared, viewer): GlReq, body: Bytes) -> Response {
    let request: async_graphql::Request = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(_) => return GlError::bad_request("invalid JSON").into_response(),
    };
    let response = SCHEMA.execute(request.data(shared).data(viewer)).await;
    Json(response).into_response()
}

/// A user's global id, `gid://gitlab/User/<id>` (GitLab's `UserID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct UserGid(u64);

#[Scalar(name = "UserID")]
impl ScalarType for UserGid {
    fn parse(value: Value) -> InputValueResult<Self> {
        let Value::String(text) = value else {
            return Err(InputValueError::expected_type(value));
        };
        match text
            .strip_prefix("gid://gitlab/")
            .map(|t| t.split_once('/'))
        {
            Some(Some(("User", id))) => id
                .parse()
                .map(UserGid)
                .map_err(|_| InputValueError::custom(format!("{text:?} is not a valid Global ID"))),
            Some(Some(_)) => Err(InputValueError::custom(format!(
                "{text:?} does not represent an instance of User"
            ))),
            _ => Err(InputValueError::custom(format!(
                "{text:?} is not a valid Global ID"
            ))),
        }
    }

    fn to_value(&self) -> Value {
        Value::String(format!("gid://gitlab/User/{}", self.0))
    }
}

/// The GitLab queries: only the viewer.
struct Query;

#[Object]
impl Query {
    /// The authenticated user.
    async fn current_user(&self, ctx: &Context<'_>) -> async_graphql::Result<UserCore> {
        let viewer = ctx.data::<Viewer>()?;
        Ok(UserCore {
            username: viewer.login.clone(),
        })
    }
}

/// A user, by their username.
#[derive(SimpleObject)]
struct UserCore {
    username: String,
}

/// The input of `mergeRequestReviewerRereview`.
#[derive(InputObject)]
#[graphql(name = "MergeRequestReviewerRereviewInput")]
struct RereviewInput {
    /// The project's full path.
    project_path: ID,
    /// The merge request's iid.
    iid: String,
    /// The reviewer asked again.
    user_id: UserGid,
    /// Echoed back.
    client_mutation_id: Option<String>,
}

/// The payload of `mergeRequestReviewerRereview`.
#[derive(SimpleObject)]
#[graphql(name = "MergeRequestReviewerRereviewPayload")]
struct RereviewPayload {
    client_mutation_id: Option<String>,
    /// Why the mutation failed; empty when it did not.
    errors: Vec<String>,
    merge_request: Option<MergeRequest>,
}

/// A merge request, the fields the payload gives.
#[derive(SimpleObject)]
struct MergeRequest {
    /// `gid://gitlab/MergeRequest/<id>`.
    id: ID,
    iid: String,
    title: String,
}

/// The GitLab mutations.
struct Mutation;

#[Object]
impl Mutation {
    /// Asks a reviewer of a merge request to review it again: their state
    /// goes back to `unreviewed`, with a system note "requested review from
    /// @login".
    async fn merge_request_reviewer_rereview(
        &self,
        ctx: &Context<'_>,
        input: RereviewInput,
    ) -> async_graphql::Result<RereviewPayload> {
        let shared = ctx.data::<Arc<Shared>>()?;
        let viewer = ctx.data::<Viewer>()?;
        let (number, merge_request, login, result) = {
            let mut state = shared.write();
            let pr = merge_request(&state, viewer, &input.project_path, &input.iid)
                .map_err(|_| async_graphql::Error::new(RESOURCE_ACCESS_ERROR))?;
            // Updating a merge request is for its author and developers.
            if pr.author != viewer.login && viewer.permission < Permission::Write {
                return Err(async_graphql::Error::new(RESOURCE_ACCESS_ERROR));
            }
            let number = pr.number;
            let merge_request = MergeRequest {
                id: ID(format!("gid://gitlab/MergeRequest/{}", pr.database_id)),
                iid: pr.number.to_string(),
                title: pr.title.clone(),
            };
            let login = state
                .users
                .iter()
                .find(|u| u.database_id == input.user_id.0)
                .map(|u| u.login.clone())
                .ok_or_else(|| async_graphql::Error::new(RESOURCE_ACCESS_ERROR))?;
            let result = state.apply_rereview(number, &viewer.login, &login);
            (number, merge_request, login, result)
        };
        let errors = match result {
            Ok(()) => {
                crate::bots::on_review_request(shared, number, &[login]);
                Vec::new()
            }
            Err(WriteError::NotFound(message)) => vec![message],
            Err(err) => return Err(async_graphql::Error::new(err.to_string())),
        };
        Ok(RereviewPayload {
            client_mutation_id: input.client_mutation_id,
            errors,
            merge_request: Some(merge_request),
        })
    }
}
