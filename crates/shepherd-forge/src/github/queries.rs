//! Every GraphQL document the GitHub client sends, in one place.
//!
//! Each document holds exactly one named operation: the name is what the
//! emulator counts requests by, and what errors and logs name. A test parses
//! each of them against GitHub's published schema ([`all_documents`]).

/// The fields read from every review comment, as a fragment appended to the
/// documents that use it.
macro_rules! review_comment_fragment {
    () => {
        "
fragment ReviewCommentFields on PullRequestReviewComment {
  id
  databaseId
  body
  url
  createdAt
  diffHunk
  author { __typename login }
  pullRequestReview { state submittedAt }
}
"
    };
}

/// A thread's `comments` connection, its page window `$window` (such as
/// `first: 100`), with the count, the page info and the comments' fields.
macro_rules! thread_comments_selection {
    ($window:literal) => {
        concat!(
            "comments(",
            $window,
            ") {
  totalCount
  pageInfo { hasNextPage endCursor }
  nodes { ...ReviewCommentFields }
}"
        )
    };
}

/// Operation name of [`PULL_REQUEST_STATE`].
pub const PULL_REQUEST_STATE_OP: &str = "PullRequestState";
/// Operation name of [`VIEWER`].
pub const VIEWER_OP: &str = "Viewer";
/// Operation name of [`REVIEW_THREADS`].
pub const REVIEW_THREADS_OP: &str = "ReviewThreads";
/// Operation name of [`THREAD_COMMENTS`].
pub const THREAD_COMMENTS_OP: &str = "ThreadComments";
/// Operation name of [`THREAD_COMMENTS_TAIL`].
pub const THREAD_COMMENTS_TAIL_OP: &str = "ThreadCommentsTail";
/// Operation name of [`PULL_REQUEST_COMMENTS`].
pub const PULL_REQUEST_COMMENTS_OP: &str = "PullRequestComments";
/// Operation name of [`THREAD_BY_ID`].
pub const THREAD_BY_ID_OP: &str = "ThreadById";
/// Operation name of [`RESOLVE_REVIEW_THREAD`].
pub const RESOLVE_REVIEW_THREAD_OP: &str = "ResolveReviewThread";
/// Operation name of [`STATUS_CHECK_ROLLUP`].
pub const STATUS_CHECK_ROLLUP_OP: &str = "StatusCheckRollup";

/// The viewer's login and the pull request's state. GitHub shows a PENDING
/// review only to its author, so one PENDING review authored by the viewer is
/// the whole question.
pub const PULL_REQUEST_STATE: &str = r#"
query PullRequestState($owner: String!, $name: String!, $number: Int!) {
  viewer { login }
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      id
      number
      title
      url
      state
      isDraft
      headRefName
      headRefOid
      baseRefName
      isCrossRepository
      author { __typename login }
      reviews(first: 1, states: [PENDING]) {
        totalCount
        nodes { author { login } }
      }
    }
  }
}
"#;

/// The viewer's login alone (when no pull request was fetched yet).
pub const VIEWER: &str = r#"
query Viewer {
  viewer { login }
}
"#;

/// One page (100) of a pull request's connection `$connection` (review
/// threads, comments), by `$owner`, `$name`, `$number` and after
/// `$cursor`: the query named `$op`, each node's fields `$fields`.
macro_rules! pull_request_page_query {
    ($op:literal, $connection:literal, $($fields:expr),+ $(,)?) => {
        concat!(
            "
query ",
            $op,
            "($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      ",
            $connection,
            "(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
",
            $($fields,)+
            "
        }
      }
    }
  }
}
"
        )
    };
}

/// One page of review threads (100), each with its first 100 comments.
pub const REVIEW_THREADS: &str = concat!(
    pull_request_page_query!(
        "ReviewThreads",
        "reviewThreads",
        "
          id
          isResolved
          isOutdated
          path
          line
          startLine
          originalLine
          originalStartLine
          diffSide
          subjectType
          viewerCanReply
          viewerCanResolve
          ",
        thread_comments_selection!("first: 100"),
    ),
    review_comment_fragment!()
);

/// One page (100) of the comments of one long thread, by the thread's node
/// id: the query named `$name`, its page window `$window` (`first`/`after`
/// or `last`/`before`, both taking `$cursor`).
macro_rules! thread_comments_query {
    ($name:literal, $window:literal) => {
        concat!(
            "
query ",
            $name,
            "($id: ID!, $cursor: String) {
  node(id: $id) {
    ... on PullRequestReviewThread {
      ",
            thread_comments_selection!($window),
            "
    }
  }
}
",
            review_comment_fragment!()
        )
    };
}

/// A further page of comments of one long thread, by the thread's node id.
pub const THREAD_COMMENTS: &str =
    thread_comments_query!("ThreadComments", "first: 100, after: $cursor");

/// The last page (100) of comments of one long thread, by the thread's node
/// id: asked beside the page after the first, so that a thread of up to 300
/// comments costs one step. `$cursor` is asked as `before` (`null`: the
/// very last 100), so both comment queries take the same variables.
pub const THREAD_COMMENTS_TAIL: &str =
    thread_comments_query!("ThreadCommentsTail", "last: 100, before: $cursor");

/// One page of the pull request's conversation (issue) comments.
pub const PULL_REQUEST_COMMENTS: &str = pull_request_page_query!(
    "PullRequestComments",
    "comments",
    "
          id
          databaseId
          body
          url
          createdAt
          author { __typename login }"
);

/// One review thread by node id, resolved or not, with its first 100
/// comments (further pages through [`THREAD_COMMENTS`]): where Shepherd looks
/// for its marker before replying, and checks a resolve.
pub const THREAD_BY_ID: &str = concat!(
    r#"
query ThreadById($id: ID!) {
  node(id: $id) {
    __typename
    ... on PullRequestReviewThread {
      id
      isResolved
      "#,
    thread_comments_selection!("first: 100"),
    r#"
    }
  }
}
"#,
    review_comment_fragment!()
);

/// Resolves one review thread (idempotent on GitHub).
pub const RESOLVE_REVIEW_THREAD: &str = r#"
mutation ResolveReviewThread($threadId: ID!) {
  resolveReviewThread(input: { threadId: $threadId }) {
    thread { id isResolved }
  }
}
"#;

/// One page (100) of the check runs and statuses of the pull request's head
/// commit, each with whether it is required for this pull request.
pub const STATUS_CHECK_ROLLUP: &str = r#"
query StatusCheckRollup($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      commits(last: 1) {
        nodes {
          commit {
            oid
            statusCheckRollup {
              state
              contexts(first: 100, after: $cursor) {
                pageInfo { hasNextPage endCursor }
                nodes {
                  __typename
                  ... on CheckRun {
                    name
                    status
                    conclusion
                    isRequired(pullRequestNumber: $number)
                    databaseId
                    detailsUrl
                    checkSuite { databaseId app { slug } }
                  }
                  ... on StatusContext {
                    context
                    state
                    isRequired(pullRequestNumber: $number)
                    targetUrl
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}
"#;

/// Every document with its operation name, for validation and for tests that
/// count requests per operation.
pub fn all_documents() -> &'static [(&'static str, &'static str)] {
    &[
        (PULL_REQUEST_STATE_OP, PULL_REQUEST_STATE),
        (VIEWER_OP, VIEWER),
        (REVIEW_THREADS_OP, REVIEW_THREADS),
        (THREAD_COMMENTS_OP, THREAD_COMMENTS),
        (THREAD_COMMENTS_TAIL_OP, THREAD_COMMENTS_TAIL),
        (PULL_REQUEST_COMMENTS_OP, PULL_REQUEST_COMMENTS),
        (THREAD_BY_ID_OP, THREAD_BY_ID),
        (RESOLVE_REVIEW_THREAD_OP, RESOLVE_REVIEW_THREAD),
        (STATUS_CHECK_ROLLUP_OP, STATUS_CHECK_ROLLUP),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn each_document_declares_its_operation_name() {
        for (name, doc) in all_documents() {
            let declared = ["query", "mutation"].iter().any(|kind| {
                doc.contains(&format!("{kind} {name}("))
                    || doc.contains(&format!("{kind} {name} {{"))
            });
            assert!(declared, "{name} is not the operation of its document");
            assert_eq!(
                doc.matches("query ").count() + doc.matches("mutation ").count(),
                1,
                "{name} holds one operation"
            );
        }
        let mutations: Vec<&str> = all_documents()
            .iter()
            .filter(|(_, doc)| doc.contains("mutation "))
            .map(|(name, _)| *name)
            .collect();
        assert_eq!(mutations, [RESOLVE_REVIEW_THREAD_OP]);
    }
}
