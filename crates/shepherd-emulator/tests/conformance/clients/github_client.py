"""PyGithub against the emulator: reads, pagination, writes, CI and errors.

Environment: SHEPHERD_API (the REST root: http://HOST or http://HOST/api/v3),
SHEPHERD_TOKEN (alice, write), SHEPHERD_READER (read only), SHEPHERD_OWNER and
SHEPHERD_REPO. Every check prints one line; the first failure raises and
exits non-zero with its traceback.
"""

import os

import github
import requests
from github import Auth, Github

from checking import check, expect_error

API = os.environ["SHEPHERD_API"]
FULL_NAME = f"{os.environ['SHEPHERD_OWNER']}/{os.environ['SHEPHERD_REPO']}"


def client(token, per_page=30):
    return Github(auth=Auth.Token(token), base_url=API, per_page=per_page, retry=None)


def raises(what, status, call):
    err = expect_error(what, status, call, github.GithubException, lambda e: e.status)
    check(f"{what} has a message", isinstance(err.data, dict) and "message" in err.data, err.data)
    return err


g = client(os.environ["SHEPHERD_TOKEN"])
small = client(os.environ["SHEPHERD_TOKEN"], per_page=2)

# Reads.
me = g.get_user()
check("get_user login", me.login == "alice", me.login)
repo = g.get_repo(FULL_NAME)
check("get_repo full_name", repo.full_name == FULL_NAME, repo.full_name)
check("repo url under the API base", repo.url.startswith(API + "/repos/"), repo.url)
check("repo default_branch", repo.default_branch == "main", repo.default_branch)
pr = repo.get_pull(1)
check("get_pull title", pr.title == "Add widgets", pr.title)
check("pull url under the API base", pr.url == f"{API}/repos/{FULL_NAME}/pulls/1", pr.url)
check("pull issue_url", pr.issue_url == f"{API}/repos/{FULL_NAME}/issues/1", pr.issue_url)
check("pull user", pr.user.login == "alice", pr.user)
check("pull head ref", pr.head.ref == "feature/widgets", pr.head.ref)
check("pull head user", pr.head.user.login == os.environ["SHEPHERD_OWNER"], pr.head.user)
check("pull head repo", pr.head.repo.full_name == FULL_NAME, pr.head.repo)
check("pull base ref", pr.base.ref == "main", pr.base.ref)
check("pull mergeable is known", pr.mergeable in (True, False), pr.mergeable)
check("pull mergeable_state", isinstance(pr.mergeable_state, str), pr.mergeable_state)
check("pull requested_reviewers", list(pr.requested_reviewers) == [], pr.requested_reviewers)
check("pull labels", [label.name for label in pr.labels] == ["enhancement"], pr.labels)
check("pull diff_url", pr.diff_url.endswith("/pull/1.diff"), pr.diff_url)
issue = repo.get_issue(1)
check("get_issue is the pull request", issue.number == 1 and issue.pull_request is not None, issue)
check("issue.as_pull_request", issue.as_pull_request().number == 1)
check("repo labels", "enhancement" in [label.name for label in repo.get_labels()])
check("repo get_label", repo.get_label("enhancement").name == "enhancement")
pulls = list(repo.get_pulls(state="all"))
check("get_pulls", [p.number for p in pulls] == [1], pulls)
commits = list(pr.get_commits())
check("pull commits", len(commits) >= 1 and commits[-1].sha == pr.head.sha, commits)
files = list(pr.get_files())
check("pull files", "src/lib.rs" in [f.filename for f in files], [f.filename for f in files])
check("pull file patch", all(f.patch for f in files if f.filename == "src/lib.rs"))
commit = repo.get_commit(pr.head.sha)
check("get_commit", commit.sha == pr.head.sha and commit.commit.message, commit)
rate = g.get_rate_limit()
check("rate limit", rate.resources.core.limit > 0, rate)

# Pagination: two to a page, Link headers followed to the end.
spr = small.get_repo(FULL_NAME).get_pull(1)
review_comments = list(spr.get_review_comments())
check("review comments over pages", len(review_comments) == 10, len(review_comments))
check(
    "review comments in order",
    [c.id for c in review_comments] == sorted(c.id for c in review_comments),
)
first = review_comments[0]
check("comment position in the diff hunk", first.position is not None and first.position >= 1, first.position)
check("comment line", first.line == 3, first.line)
issue_comments = list(spr.get_issue_comments())
check("issue comments over pages", len(issue_comments) == 3, len(issue_comments))
reviews = list(spr.get_reviews())
check("reviews", len(reviews) >= 1, reviews)

# Writes.
comment = pr.create_issue_comment("from PyGithub")
check("create issue comment", comment.body == "from PyGithub" and comment.user.login == "alice")
check("issue comment url under the API base", comment.url.startswith(API + "/"), comment.url)
reply = pr.create_review_comment_reply(first.id, "a reply from PyGithub")
check("reply", reply.in_reply_to_id == first.id, reply.raw_data)
new = pr.create_review_comment("a new thread", commits[-1], "src/lib.rs", line=5, side="RIGHT")
check("new review comment", new.line == 5 and new.path == "src/lib.rs", new.raw_data)
review = pr.create_review(body="looks fine", event="COMMENT")
check("create review", review.state == "COMMENTED", review.state)
pr.add_to_labels("bug")
check("add label", "bug" in [label.name for label in repo.get_pull(1).labels])
pr.remove_from_labels("bug")
check("remove label", "bug" not in [label.name for label in repo.get_pull(1).labels])
pr.set_labels("triaged", "enhancement")
check("set labels", sorted(label.name for label in repo.get_pull(1).labels) == ["enhancement", "triaged"])
events = [(e.event, e.label.name, e.actor.login) for e in repo.get_issue(1).get_events()]
check("set labels' events", events[-1] == ("labeled", "triaged", "alice"), events)
pr.create_review_request(reviewers=["bob"])
users, teams = pr.get_review_requests()
check("review requests", [u.login for u in users] == ["bob"] and list(teams) == [], list(users))
check("pull requested_reviewers after a request", [u.login for u in repo.get_pull(1).requested_reviewers] == ["bob"])
pr.delete_review_request(reviewers=["bob"])
check("review request withdrawn", list(pr.get_review_requests()[0]) == [])
pr.edit(title="Add widgets, edited")
check("edit title", repo.get_pull(1).title == "Add widgets, edited")
pr.edit(title="Add widgets")
status = commit.create_status("success", target_url="http://ci.example/1", description="ok", context="pygithub")
check("create status", status.state == "success" and status.context == "pygithub", status)

# CI.
runs = list(commit.get_check_runs())
check("check runs", {r.name for r in runs} >= {"tests"}, [r.name for r in runs])
run = repo.get_check_run(runs[0].id)
check("get check run", run.id == runs[0].id and run.status == "completed", run)
suite = repo.get_check_suite(run.check_suite.id)
check("get check suite", suite.id == run.check_suite.id and suite.head_sha == pr.head.sha, suite)
combined = commit.get_combined_status()
check("combined status", "pygithub" in [s.context for s in combined.statuses], combined)
statuses = list(commit.get_statuses())
check("statuses", "pygithub" in [s.context for s in statuses], statuses)
branch = repo.get_branch("main")
check("branch", branch.name == "main" and branch.protected, branch)
required = branch.get_required_status_checks()
check("required status checks", "tests" in required.contexts, required.contexts)
workflow_runs = list(repo.get_workflow_runs())
check("workflow runs", len(workflow_runs) >= 1, workflow_runs)
wr = repo.get_workflow_run(workflow_runs[0].id)
check("workflow run head_commit", wr.head_commit.sha == wr.head_sha, wr.raw_data.get("head_commit"))
check("workflow run artifacts_url", wr.artifacts_url.startswith(API + "/"), wr.artifacts_url)
jobs = list(wr.jobs())
check("jobs", len(jobs) >= 1, jobs)
job = repo.get_workflow_run(wr.id).jobs()[0]
check("job url under the API base", job.url.startswith(API + "/"), job.url)
lint = next(j for j in wr.jobs() if j.name == "lint")
location = lint.logs_url()
check("job logs redirect", location.startswith("http"), location)
log = requests.get(location, timeout=10).text
check("job log", log.endswith(" ##[error]Process completed with exit code 1.\n"), log)
lint_run = repo.get_check_run(lint.id)
check("check run output", (lint_run.output.title, lint_run.output.summary) == ("lint failure", "exit status 1"), lint_run.output)
check("rerun", wr.rerun())
check("rerun made attempt 2", repo.get_workflow_run(wr.id).run_attempt == 2)

# Errors.
try:
    g.requester.graphql_query('query { node(id: "bogus") { id } }', {})
    raise AssertionError("a bogus node id: no error")
except github.UnknownObjectException as err:
    message = err.data["errors"][0]["message"]
    check("bogus node id", message == "Could not resolve to a node with the global id of 'bogus'.", err.data)
raises("missing pull is a 404", 404, lambda: repo.get_pull(999))
raises("missing repository is a 404", 404, lambda: g.get_repo(f"{os.environ['SHEPHERD_OWNER']}/nope"))
raises("bad token is a 401", 401, lambda: client("nope").get_user().login)
reader = client(os.environ["SHEPHERD_READER"]).get_repo(FULL_NAME).get_pull(1)
raises("read-only write is a 403", 403, lambda: reader.create_issue_comment("no"))
raises(
    "review comment off the diff is a 422",
    422,
    lambda: pr.create_review_comment("off", commits[-1], "src/lib.rs", line=250, side="RIGHT"),
)
print("all PyGithub checks passed")
