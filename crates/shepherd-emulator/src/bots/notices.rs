//! What the profiled bots write, modelled on what the real ones post in
//! public repositories (the sources are named at each text). Only the
//! phrases clients match on are the real ones ("Review limit reached",
//! "Next review available in:", "⚠️ Action not completed", "Review rate
//! limited", "Reviewed commit:", "reached their quota limit"); the prose
//! around them is shortened.

/// CodeRabbit's commit status context. Seen in the statuses of reviewed
/// heads, e.g. Comfy-Org/ComfyUI#15382 (`{"context":"CodeRabbit",
/// "state":"pending","description":"Review in progress"}`, then
/// `"success"`), and modu-ai/moai-adk#1542 ("Review completed").
pub(super) const CODERABBIT_CONTEXT: &str = "CodeRabbit";
/// The status while it reviews (Comfy-Org/ComfyUI#15382).
pub(super) const REVIEW_IN_PROGRESS: &str = "Review in progress";
/// The status once it reviewed (modu-ai/moai-adk#1542).
pub(super) const REVIEW_COMPLETED: &str = "Review completed";
/// The `success` status of a review that did not run
/// (Comfy-Org/ComfyUI#15382: `"state":"success","description":"Review rate
/// limited"`).
pub(super) const REVIEW_RATE_LIMITED: &str = "Review rate limited";

/// CodeRabbit's walkthrough comment after a review of `sha`: one comment
/// per pull request, edited in place for every review (hathach/tinyusb#3910:
/// "its walkthrough comment, which is edited in place — `created_at` proves
/// nothing"). The marker is CodeRabbit's HTML comment.
pub(super) fn walkthrough(sha: &str, reviews: u32, findings: usize) -> String {
    format!(
        "<!-- This is an auto-generated comment: summarize by coderabbit.ai -->\n\
         ## Walkthrough\n\n\
         Reviewed commit `{sha}` ({reviews} review{} so far); \
         {findings} actionable comment{} in this review.",
        plural(reviews as usize),
        plural(findings),
    )
}

/// The body of CodeRabbit's review with findings (hathach/tinyusb#3902: "a
/// PR review whose body opens `**Actionable comments posted: N**`").
pub(super) fn coderabbit_review(findings: usize) -> String {
    format!("**Actionable comments posted: {findings}**")
}

/// CodeRabbit's notice in place of a review when the author's review limit
/// is reached, as in anticipation-labs/canopy#13 and
/// lhpaul/ai-dev-framework-template#1579; on an automatic review it goes
/// into the walkthrough comment, edited in place
/// (devantler-tech/platform#2917).
pub(super) fn review_limit_reached(author: &str, minutes: u32) -> String {
    format!(
        "<!-- This is an auto-generated comment: rate limited by coderabbit.ai -->\n\
         > [!WARNING]\n\
         > ## Review limit reached\n\
         >\n\
         > `@{author}`, you've reached your PR review limit, so we couldn't start this review.\n\
         >\n\
         > **Next review available in:** **{minutes} minutes**\n\
         >\n\
         > After more reviews become available, a review can be triggered using the \
         `@coderabbitai review` command as a PR comment. Alternatively, push new commits to this PR."
    )
}

/// CodeRabbit's reply to `@coderabbitai review` when it cannot review.
pub(super) fn action_not_completed(minutes: u32) -> String {
    format!(
        "<!-- This is an auto-generated reply by CodeRabbit -->\n\
         > [!WARNING]\n\
         > ## ⚠️ Action not completed\n\
         >\n\
         > Review rate limited. Review limit reached: \
         Next review available in: {minutes} minutes."
    )
}

/// CodeRabbit's reply to `@coderabbitai review` when it starts a review; it
/// reviews incrementally and never reviews a commit twice
/// (allxsmith/bestax#473: "CodeRabbit reviews incrementally").
pub(super) const ACTIONS_PERFORMED: &str = "<!-- This is an auto-generated reply by CodeRabbit -->\n\
✅ Actions performed\n\nReview triggered.\n\n\
> Note: CodeRabbit is an incremental review system and does not re-review already reviewed commits.";

/// The body of Codex's review with findings: it names the reviewed commit
/// (hathach/tinyusb#3910: "when Codex has findings it also submits a PR
/// review whose `commit_id` is the reviewed commit and whose body carries
/// `**Reviewed commit:** <short sha>`"; a clean pass posts no review).
pub(super) fn codex_review(sha: &str) -> String {
    let short = &sha[..sha.len().min(10)];
    format!(
        "### 💡 Codex Review\n\n\
         Here are some automated review suggestions for this pull request.\n\n\
         **Reviewed commit:** `{short}`"
    )
}

/// The body of Copilot's review, which it submits on the head whether or
/// not it has comments (hathach/tinyusb#3902: a "PR review … it leaves
/// `requested_reviewers` once submitted").
pub(super) fn copilot_review(files: usize, findings: usize) -> String {
    format!(
        "## Pull request overview\n\n\
         Copilot reviewed {files} out of {files} changed files in this pull request \
         and generated {findings} comment{}.",
        plural(findings)
    )
}

/// Copilot's comment when the review quota is used up
/// (Flowfin/jellyfin-plugin-sso#99: "reached their quota limit";
/// Systemorph/MeshWeaver#656: the PR is left unreviewed).
pub(super) const COPILOT_QUOTA: &str = "Copilot was unable to review this pull request \
because the user who requested the review has reached their quota limit.";

/// The body of an ask-only bot's review (Gemini Code Assist reviews when a
/// comment says `/gemini review`: developers.google.com/gemini-code-assist/
/// docs/use-code-assist-github).
pub(super) fn ask_only_review(findings: usize) -> String {
    if findings == 0 {
        "## Code Review\n\nI have no feedback to provide on this pull request.".to_owned()
    } else {
        format!(
            "## Code Review\n\nThis review found {findings} issue{} in the changes.",
            plural(findings)
        )
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
