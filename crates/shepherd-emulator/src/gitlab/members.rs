//! `GET /projects/:id/members/all`: the project's members with their access
//! level (what Shepherd asks before honouring a `/shepherd approve`).

use axum::extract::Path;
use axum::response::Response;
use serde_json::Value;

use super::common::{read_project, GlError, GlPaging, GlReq};
use super::json::{access_level, user_json};
use crate::scenario::Permission;

/// Every user with access, `query` matching the username (as a substring,
/// case-insensitive, as GitLab's search does), each with `access_level`.
pub(crate) async fn list_all_members(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path(id): Path<String>,
) -> Result<Response, GlError> {
    read_project(&shared, &viewer, &id, |cx| {
        let query = paging.param("query").map(str::to_lowercase);
        let items: Vec<Value> = cx
            .state
            .users
            .iter()
            .filter(|u| u.permission > Permission::None)
            .filter(|u| {
                query
                    .as_ref()
                    .is_none_or(|q| u.login.to_lowercase().contains(q.as_str()))
            })
            .map(|u| {
                let mut member = user_json(u, &shared.base_url);
                member["access_level"] = access_level(u.permission).into();
                member
            })
            .collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}
