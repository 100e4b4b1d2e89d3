//! `GET /` (the API root's URL templates: what `gh auth status` reads at
//! `/api/v3/` to check a token) and the Actions workflows
//! (`GET …/actions/workflows`, `…/actions/workflows/{workflow_id}`: the
//! scenario's one workflow, id 1, `.github/workflows/ci.yml`).

use axum::extract::Path;
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};

use super::common::{visible_repository, Api, ApiError, Authed, List, Repo, Req, Scoped};
use super::json::web_root;
use crate::state::RepositoryRecord;

/// `GET /`: GitHub's root, every URL under the root the request used. No
/// `X-OAuth-Scopes` header: the emulator's tokens have no scopes (as a
/// fine-grained token; `gh auth status` then checks none).
pub(crate) async fn root(Authed(_viewer): Authed, Api(api): Api) -> Json<Value> {
    let web = web_root(&api);
    Json(json!({
        "current_user_url": format!("{api}/user"),
        "current_user_authorizations_html_url": format!("{web}/settings/connections/applications{{/client_id}}"),
        "authorizations_url": format!("{api}/authorizations"),
        "code_search_url": format!("{api}/search/code?q={{query}}{{&page,per_page,sort,order}}"),
        "commit_search_url": format!("{api}/search/commits?q={{query}}{{&page,per_page,sort,order}}"),
        "emails_url": format!("{api}/user/emails"),
        "emojis_url": format!("{api}/emojis"),
        "events_url": format!("{api}/events"),
        "feeds_url": format!("{api}/feeds"),
        "followers_url": format!("{api}/user/followers"),
        "following_url": format!("{api}/user/following{{/target}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "hub_url": format!("{api}/hub"),
        "issue_search_url": format!("{api}/search/issues?q={{query}}{{&page,per_page,sort,order}}"),
        "issues_url": format!("{api}/issues"),
        "keys_url": format!("{api}/user/keys"),
        "label_search_url": format!("{api}/search/labels?q={{query}}&repository_id={{repository_id}}{{&page,per_page}}"),
        "notifications_url": format!("{api}/notifications"),
        "organization_url": format!("{api}/orgs/{{org}}"),
        "organization_repositories_url": format!("{api}/orgs/{{org}}/repos{{?type,page,per_page,sort}}"),
        "organization_teams_url": format!("{api}/orgs/{{org}}/teams"),
        "public_gists_url": format!("{api}/gists/public"),
        "rate_limit_url": format!("{api}/rate_limit"),
        "repository_url": format!("{api}/repos/{{owner}}/{{repo}}"),
        "repository_search_url": format!("{api}/search/repositories?q={{query}}{{&page,per_page,sort,order}}"),
        "current_user_repositories_url": format!("{api}/user/repos{{?type,page,per_page,sort}}"),
        "starred_url": format!("{api}/user/starred{{/owner}}{{/repo}}"),
        "starred_gists_url": format!("{api}/gists/starred"),
        "topic_search_url": format!("{api}/search/topics?q={{query}}{{&page,per_page}}"),
        "user_url": format!("{api}/users/{{user}}"),
        "user_organizations_url": format!("{api}/user/orgs"),
        "user_repositories_url": format!("{api}/users/{{user}}/repos{{?type,page,per_page,sort}}"),
        "user_search_url": format!("{api}/search/users?q={{query}}{{&page,per_page,sort,order}}"),
    }))
}

/// The scenario's workflow (`workflow_id` 1 of every run).
fn workflow_json(repo: &RepositoryRecord, name: &str, api: &str) -> Value {
    let full_name = repo.full_name();
    let path = ".github/workflows/ci.yml";
    json!({
        "id": 1,
        // `W_` and the emulator's encoding of `emu:W:1` (no node looks it up).
        "node_id": "W_ZW11Olc6MQ",
        "name": name,
        "path": path,
        "state": "active",
        // The repository's fixed creation time (see the README).
        "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z",
        "url": format!("{api}/repos/{full_name}/actions/workflows/1"),
        "html_url": format!("{}/blob/{}/{path}", repo.html_url, repo.default_branch),
        "badge_url": format!("{}/workflows/{}/badge.svg", repo.html_url, name),
    })
}

/// `GET …/actions/workflows`: the one workflow.
pub(crate) async fn list_workflows(Scoped(shared, _, api, paging, Repo): List<Repo>) -> Response {
    let state = shared.read();
    let items = vec![workflow_json(
        &state.repository,
        &shared.scenario.ci.workflow,
        &api,
    )];
    paging.counted(&shared.base_url, "workflows", items)
}

/// `GET …/actions/workflows/{workflow_id}`: the workflow by id (`1`) or
/// file name (`ci.yml`); 404 otherwise.
pub(crate) async fn get_workflow(
    Req(shared, viewer, api): Req,
    Path((owner, repo, workflow_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    if workflow_id != "1" && workflow_id != "ci.yml" {
        return Err(ApiError::NotFound);
    }
    Ok(Json(workflow_json(
        record,
        &shared.scenario.ci.workflow,
        &api,
    )))
}
