"""python-gitlab against the emulator: reads, pagination, writes, CI and errors.

Environment: SHEPHERD_URL (the GitLab root, http://HOST), SHEPHERD_TOKEN
(alice, developer), SHEPHERD_READER (read only) and SHEPHERD_PROJECT (the
project's full path). Every check prints one line; the first failure raises
and exits non-zero with its traceback.
"""

import time
import os

import gitlab

from checking import check, expect_error

URL = os.environ["SHEPHERD_URL"]
PROJECT = os.environ["SHEPHERD_PROJECT"]


def client(token, per_page=None):
    return gitlab.Gitlab(URL, private_token=token, per_page=per_page, retry_transient_errors=False)


def raises(what, status, call):
    return expect_error(what, status, call, gitlab.exceptions.GitlabError, lambda e: e.response_code)


gl = client(os.environ["SHEPHERD_TOKEN"])
gl.auth()
check("auth user", gl.user.username == "alice", gl.user)
project = gl.projects.get(PROJECT)
check("project path", project.path_with_namespace == PROJECT, project.path_with_namespace)
by_id = gl.projects.get(project.id)
check("project by id", by_id.id == project.id)
mr = project.mergerequests.get(1)
check("merge request", mr.iid == 1 and mr.title == "Add widgets", mr.title)
check("merge request sha", len(mr.sha) == 40, mr.sha)
check("merge request branches", (mr.source_branch, mr.target_branch) == ("feature/widgets", "main"))
check("merge request author", mr.author["username"] == "alice", mr.author)
mrs = project.mergerequests.list(state="opened", get_all=True)
check("merge requests list", [m.iid for m in mrs] == [1], mrs)

# Pagination: two to a page, followed to the end.
small = client(os.environ["SHEPHERD_TOKEN"], per_page=2)
smr = small.projects.get(PROJECT).mergerequests.get(1)
discussions = smr.discussions.list(get_all=True)
threads = [d for d in discussions if not d.attributes["individual_note"]]
check("discussions over pages", len(threads) == 5, len(threads))
pages = smr.discussions.list(iterator=True)
check("discussions total", pages.total == len(discussions), (pages.total, len(discussions)))
notes = smr.notes.list(get_all=True)
check("notes over pages", len(notes) >= 11, len(notes))

# Writes.
note = mr.notes.create({"body": "from python-gitlab"})
check("create note", note.body == "from python-gitlab" and note.author["username"] == "alice")
check("get note", mr.notes.get(note.id).body == "from python-gitlab")
thread = mr.discussions.get(threads[0].id)
reply = thread.notes.create({"body": "a reply from python-gitlab"})
check("reply in a discussion", reply.body == "a reply from python-gitlab")
fetched = thread.notes.get(reply.id)
check("get a discussion note", fetched.id == reply.id and fetched.body == reply.body, fetched)
thread.resolved = True
thread.save()
check("resolve a discussion", mr.discussions.get(thread.id).attributes["notes"][0]["resolved"])
resolved_once = gl.http_put(
    f"/projects/{project.id}/merge_requests/1/discussions/{threads[1].id}", query_data={"resolved": "True"}
)
check("resolved=True accepted", resolved_once["notes"][0]["resolved"] is True, resolved_once)
unresolved = gl.http_put(
    f"/projects/{project.id}/merge_requests/1/discussions/{threads[1].id}", query_data={"resolved": "0"}
)
check("resolved=0 accepted", unresolved["notes"][0]["resolved"] is False, unresolved)
mr.title = "Add widgets, edited"
mr.save()
check("edit title", project.mergerequests.get(1).title == "Add widgets, edited")
mr.title = "Add widgets"
mr.save()

# What a GitLab user's tools read and write besides notes (issue 30).
changes = mr.changes()
check("changes", any(c["new_path"] == "src/lib.rs" and "+line 5" in c["diff"] for c in changes["changes"]), changes)
versions = mr.diffs.list(get_all=True)
check("diff versions", [v.head_commit_sha for v in versions] == [mr.sha], versions)
version = mr.diffs.get(versions[0].id)
check("one diff version", [d["new_path"] for d in version.diffs] == ["README.md", "src/lib.rs"], version.diffs)
check("one diff version's commits", [c["id"] for c in version.commits] == [mr.sha], version.commits)
commits = mr.commits()
check("merge request commits", [c.id for c in commits] == [mr.sha], commits)
participants = [p["username"] for p in mr.participants()]
check("participants", participants == ["alice", "bob", "review-bot"], participants)
check("no approvals yet", mr.approvals.get().approved is False)
mr.approve(sha=mr.sha)
approved = mr.approvals.get()
check("approve", [a["user"]["username"] for a in approved.approved_by] == ["alice"], approved.approved_by)
raises("approving twice is a 401", 401, lambda: mr.approve())
mr.unapprove()
check("unapprove", mr.approvals.get().approved_by == [])
# approve() and unapprove() leave the approval state in the object, as
# GitLab answers it: read the merge request again.
mr = project.mergerequests.get(1)
overview = mr.discussions.create({"body": "a question on the whole change"})
first = overview.attributes["notes"][0]
check("new discussion", not overview.attributes["individual_note"] and first["type"] == "DiscussionNote", first)
position = {
    "base_sha": mr.diff_refs["base_sha"],
    "start_sha": mr.diff_refs["start_sha"],
    "head_sha": mr.diff_refs["head_sha"],
    "position_type": "text",
    "new_path": "src/lib.rs",
    "old_path": "src/lib.rs",
    "new_line": 5,
}
on_line = mr.discussions.create({"body": "why line 5?", "position": position})
note = on_line.attributes["notes"][0]
check("new diff discussion", note["type"] == "DiffNote" and note["position"]["new_line"] == 5, note)
position["new_line"] = 250
raises("a position off the diff is a 400", 400, lambda: mr.discussions.create({"body": "x", "position": position}))
mr.title = "Draft: Add widgets"
mr.save()
drafted = project.mergerequests.get(1)
check("draft from the title", drafted.draft is True and drafted.work_in_progress is True, drafted.draft)
mr.title = "Add widgets"
mr.save()
check("no longer a draft", project.mergerequests.get(1).draft is False)

# CI.
pipelines = mr.pipelines.list(get_all=True)
check("merge request pipelines", len(pipelines) >= 1, pipelines)
pipeline = project.pipelines.get(pipelines[0].id)
check("pipeline", pipeline.sha == mr.sha, pipeline)
jobs = pipeline.jobs.list(get_all=True)
check("pipeline jobs", {j.name for j in jobs} >= {"tests"}, [j.name for j in jobs])
job = project.jobs.get(jobs[0].id)
check("job", job.id == jobs[0].id and job.status in ("success", "failed"), job.status)
lint = next(j for j in jobs if j.name == "lint")
trace = project.jobs.get(lint.id).trace()
check("job trace", trace == b"ERROR: Job failed: exit code 1\n", trace)
job.retry()
retried = pipeline.jobs.list(get_all=True, include_retried=True)
check("include_retried=True counts the retried job", len(retried) == len(jobs) + 1, (len(retried), len(jobs)))
pipeline.retry()
after = pipeline.jobs.list(get_all=True, include_retried=True)
check("pipeline retry retries the failed job", len([j for j in after if j.name == "lint"]) == 2, [j.name for j in after])
bob = project.members_all.list(query="bob")[0]
mr = project.mergerequests.get(1)
mr.reviewer_ids = [bob.id]
mr.save()
check("reviewers", [r["username"] for r in project.mergerequests.get(1).reviewers] == ["bob"])
mr.reviewer_ids = []
mr.save()
check("reviewers cleared", project.mergerequests.get(1).reviewers == [])
# The pipeline retried above runs again: its status settles within seconds
# (longer on a loaded machine), so the list is read until it has.
deadline = time.monotonic() + 60
while True:
    statuses = project.commits.get(mr.sha, lazy=True).statuses.list(get_all=True)
    seen = [(s.name, s.status) for s in statuses]
    if seen == [("tests", "success")] or time.monotonic() > deadline:
        break
    time.sleep(0.2)
check("commit statuses", seen == [("tests", "success")], seen)
compare = project.repository_compare("main", "feature/widgets")
check("compare", any(d["new_path"] == "src/lib.rs" for d in compare["diffs"]), compare)

# Errors.
raises("missing merge request is a 404", 404, lambda: project.mergerequests.get(999))
raises("missing project is a 404", 404, lambda: gl.projects.get("acme/tools/nope"))
raises("bad token is a 401", 401, lambda: client("nope").auth())
reader = client(os.environ["SHEPHERD_READER"]).projects.get(PROJECT).mergerequests.get(1)
raises("missing discussion note is a 404", 404, lambda: thread.notes.get(987654321))
print("all python-gitlab checks passed")
