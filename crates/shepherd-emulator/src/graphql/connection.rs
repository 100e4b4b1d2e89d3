//! Relay connections with GitHub's rules: `first` or `last` required, at most
//! 100, opaque cursors for `after` and `before`.

use async_graphql::SimpleObject;

use super::errors::typed;
use super::label::Label;
use super::objects::{
    CommentNode, IssueComment, PullRequest, PullRequestReview, PullRequestReviewComment,
    PullRequestReviewThread, ThreadNode,
};
use crate::ids;

/// GitHub's page size limit.
pub(crate) const MAX_PAGE: i32 = 100;

/// Information to aid in pagination.
#[derive(Debug, Clone, PartialEq, Eq, SimpleObject)]
pub(crate) struct PageInfo {
    /// When paginating forwards, the cursor to continue.
    pub(crate) end_cursor: Option<String>,
    /// When paginating forwards, are there more items?
    pub(crate) has_next_page: bool,
    /// When paginating backwards, are there more items?
    pub(crate) has_previous_page: bool,
    /// When paginating backwards, the cursor to continue.
    pub(crate) start_cursor: Option<String>,
}

/// A page of a list, before it becomes one of GitHub's connection types.
pub(crate) struct Page<T> {
    /// The page's items with their cursors.
    pub(crate) items: Vec<(String, T)>,
    pub(crate) page_info: PageInfo,
    pub(crate) total_count: i32,
}

/// Defines a GitHub connection type and its edge type for one node type
/// (`nodes` may hold a wrapper of it that resolves the same type faster).
macro_rules! connection {
    ($connection:ident, $edge:ident, $node:ty, $doc:literal) => {
        connection!($connection, $edge, $node, $node, $doc);
    };
    ($connection:ident, $edge:ident, $node:ty, $list_node:ty, $doc:literal) => {
        #[doc = $doc]
        #[derive(SimpleObject)]
        pub(crate) struct $connection {
            /// A list of edges.
            pub(crate) edges: Option<Vec<Option<$edge>>>,
            /// A list of nodes.
            pub(crate) nodes: Option<Vec<Option<$list_node>>>,
            /// Information to aid in pagination.
            pub(crate) page_info: PageInfo,
            /// Identifies the total count of items in the connection.
            pub(crate) total_count: i32,
        }

        /// An edge in a connection.
        #[derive(Clone, SimpleObject)]
        pub(crate) struct $edge {
            /// A cursor for use in pagination.
            pub(crate) cursor: String,
            /// The item at the end of the edge.
            pub(crate) node: Option<$node>,
        }

        impl From<Page<$node>> for $connection {
            fn from(page: Page<$node>) -> Self {
                let edges = page
                    .items
                    .iter()
                    .map(|(cursor, node)| {
                        Some($edge {
                            cursor: cursor.clone(),
                            node: Some(node.clone()),
                        })
                    })
                    .collect();
                let nodes = page
                    .items
                    .into_iter()
                    .map(|(_, node)| Some(<$list_node>::from(node)))
                    .collect();
                $connection {
                    edges: Some(edges),
                    nodes: Some(nodes),
                    page_info: page.page_info,
                    total_count: page.total_count,
                }
            }
        }
    };
}

// The other object files define their connections with it too.
pub(crate) use connection;

connection!(
    PullRequestReviewThreadConnection,
    PullRequestReviewThreadEdge,
    PullRequestReviewThread,
    ThreadNode,
    "Review comment threads for a pull request review."
);
connection!(
    PullRequestReviewCommentConnection,
    PullRequestReviewCommentEdge,
    PullRequestReviewComment,
    CommentNode,
    "The connection type for PullRequestReviewComment."
);
connection!(
    PullRequestReviewConnection,
    PullRequestReviewEdge,
    PullRequestReview,
    "The connection type for PullRequestReview."
);
connection!(
    PullRequestConnection,
    PullRequestEdge,
    PullRequest,
    "The connection type for PullRequest."
);
connection!(
    LabelConnection,
    LabelEdge,
    Label,
    "The connection type for Label."
);
connection!(
    IssueCommentConnection,
    IssueCommentEdge,
    IssueComment,
    "The connection type for IssueComment."
);

/// The pagination arguments of a connection field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PageArgs {
    pub(crate) first: Option<i32>,
    pub(crate) last: Option<i32>,
    pub(crate) after: Option<String>,
    pub(crate) before: Option<String>,
}

impl PageArgs {
    /// A connection field's paging arguments, as GraphQL names them.
    pub(crate) fn new(
        first: Option<i32>,
        last: Option<i32>,
        after: Option<String>,
        before: Option<String>,
    ) -> PageArgs {
        PageArgs {
            first,
            last,
            after,
            before,
        }
    }

    /// GitHub lets a connection without `first` or `last` answer when no
    /// items are asked for (`commits { totalCount }`, as the `gh` CLI asks):
    /// then the page is empty.
    pub(crate) fn counting_only(mut self, ctx: &async_graphql::Context<'_>) -> PageArgs {
        let look = ctx.look_ahead();
        if self.first.is_none()
            && self.last.is_none()
            && !look.field("nodes").exists()
            && !look.field("edges").exists()
        {
            self.first = Some(0);
        }
        self
    }
}

/// Where a page starts and ends in the full list, after GitHub's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Computes the page of `ids` (database ids, ascending) that `args` select.
pub(crate) fn window(
    connection: &str,
    ids: &[u64],
    args: &PageArgs,
) -> Result<Window, async_graphql::Error> {
    debug_assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids must ascend");
    window_by(connection, ids.len(), |i| ids[i], args)
}

/// The first index in `0..len` where `pred` turns false (`pred` holds on a
/// prefix), by binary search.
fn partition(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, len);
    while low < high {
        let mid = low + (high - low) / 2;
        if pred(mid) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// Like [`window`], over `len` items whose ascending database ids `id_at`
/// gives: the cursors are found by binary search, so a page costs
/// O(log len) here whatever the list's size.
pub(crate) fn window_by(
    connection: &str,
    len: usize,
    id_at: impl Fn(usize) -> u64,
    args: &PageArgs,
) -> Result<Window, async_graphql::Error> {
    let (first, last) = (args.first, args.last);
    if first.is_none() && last.is_none() {
        return Err(typed(
            "MISSING_PAGINATION_BOUNDARIES",
            format!(
                "You must provide a `first` or `last` value to properly paginate the `{connection}` connection."
            ),
        ));
    }
    if first.is_some() && last.is_some() {
        return Err(typed(
            "INVALID_PAGINATION",
            format!(
                "Passing both `first` and `last` to paginate the `{connection}` connection is not supported."
            ),
        ));
    }
    for (arg, value) in [("first", first), ("last", last)] {
        match value {
            Some(n) if n > MAX_PAGE => {
                return Err(typed(
                    "EXCESSIVE_PAGINATION",
                    format!(
                        "Requesting {n} records on the `{connection}` connection exceeds the `{arg}` limit of {MAX_PAGE} records."
                    ),
                ));
            }
            Some(n) if n < 0 => {
                return Err(typed(
                    "INVALID_PAGINATION",
                    format!("`{arg}` on the `{connection}` connection cannot be less than 0."),
                ));
            }
            _ => {}
        }
    }
    let decode = |arg: &str, value: &Option<String>| -> Result<Option<u64>, async_graphql::Error> {
        match value {
            None => Ok(None),
            Some(cursor) => ids::parse_cursor(cursor).map(Some).ok_or_else(|| {
                typed(
                    "INVALID_CURSOR_ARGUMENTS",
                    format!("`{arg}` does not appear to be a valid cursor."),
                )
            }),
        }
    };
    let after = decode("$after", &args.after)?;
    let before = decode("$before", &args.before)?;

    let mut start = after.map_or(0, |a| partition(len, |i| id_at(i) <= a));
    let mut end = before.map_or(len, |b| partition(len, |i| id_at(i) < b));
    end = end.max(start);
    // Limits were checked to be within 0..=100 above.
    if let Some(n) = first {
        end = end.min(start + n as usize);
    }
    if let Some(n) = last {
        start = start.max(end.saturating_sub(n as usize));
    }
    Ok(Window { start, end })
}

/// Like [`paginate`], but `items` are (database id, index) pairs and only
/// the page's nodes are made (by `node(index)`): a page costs its own size,
/// not the list's.
pub(crate) fn paginate_by<T>(
    connection: &str,
    items: Vec<(u64, usize)>,
    args: &PageArgs,
    node: impl Fn(usize) -> T,
) -> Result<Page<T>, async_graphql::Error> {
    let page = paginate(connection, items, args)?;
    Ok(Page {
        items: page
            .items
            .into_iter()
            .map(|(cursor, index)| (cursor, node(index)))
            .collect(),
        page_info: page.page_info,
        total_count: page.total_count,
    })
}

/// The page of `items` (in ascending database id order, `id` gives an
/// item's) that `args` ask for, making only the page's nodes (`node(index)`):
/// a page costs its own size, not the list's.
pub(crate) fn paginate_slice<T, N>(
    connection: &str,
    items: &[T],
    id: impl Fn(&T) -> u64,
    args: &PageArgs,
    node: impl Fn(usize) -> N,
) -> Result<Page<N>, async_graphql::Error> {
    let Window { start, end } = window_by(connection, items.len(), |i| id(&items[i]), args)?;
    let page: Vec<(String, N)> = (start..end)
        .map(|i| (ids::cursor(id(&items[i])), node(i)))
        .collect();
    let page_info = PageInfo {
        start_cursor: page.first().map(|(cursor, _)| cursor.clone()),
        end_cursor: page.last().map(|(cursor, _)| cursor.clone()),
        has_next_page: end < items.len(),
        has_previous_page: start > 0,
    };
    Ok(Page {
        items: page,
        page_info,
        // Totals beyond i32 cannot happen in a scenario; saturate anyway.
        total_count: i32::try_from(items.len()).unwrap_or(i32::MAX),
    })
}

/// Like [`paginate_slice`], of only the `items` the viewer may see
/// (`visible`); `hides_nothing` (every item visible) skips the filter.
pub(crate) fn paginate_visible<T, N>(
    connection: &str,
    items: &[T],
    id: impl Fn(&T) -> u64,
    (visible, hides_nothing): (impl Fn(&T) -> bool, bool),
    args: &PageArgs,
    node: impl Fn(usize) -> N,
) -> Result<Page<N>, async_graphql::Error> {
    if hides_nothing {
        return paginate_slice(connection, items, id, args, node);
    }
    let shown = items
        .iter()
        .enumerate()
        .filter(|(_, item)| visible(item))
        .map(|(index, item)| (id(item), index))
        .collect();
    paginate_by(connection, shown, args, node)
}

/// Selects the page of `items` (ascending database ids) that `args` ask for.
pub(crate) fn paginate<T>(
    connection: &str,
    items: Vec<(u64, T)>,
    args: &PageArgs,
) -> Result<Page<T>, async_graphql::Error> {
    let all_ids: Vec<u64> = items.iter().map(|(id, _)| *id).collect();
    let Window { start, end } = window(connection, &all_ids, args)?;
    let total = items.len();
    let items: Vec<(String, T)> = items
        .into_iter()
        .skip(start)
        .take(end - start)
        .map(|(id, node)| (ids::cursor(id), node))
        .collect();
    let page_info = PageInfo {
        start_cursor: items.first().map(|(cursor, _)| cursor.clone()),
        end_cursor: items.last().map(|(cursor, _)| cursor.clone()),
        has_next_page: end < total,
        has_previous_page: start > 0,
    };
    Ok(Page {
        items,
        page_info,
        // Totals beyond i32 cannot happen in a scenario; saturate anyway.
        total_count: i32::try_from(total).unwrap_or(i32::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(
        first: Option<i32>,
        last: Option<i32>,
        after: Option<u64>,
        before: Option<u64>,
    ) -> PageArgs {
        PageArgs {
            first,
            last,
            after: after.map(ids::cursor),
            before: before.map(ids::cursor),
        }
    }

    const IDS: [u64; 5] = [10, 20, 30, 40, 50];

    #[test]
    fn first_and_after_page_forwards() {
        let w = window("c", &IDS, &args(Some(2), None, None, None)).unwrap();
        assert_eq!(w, Window { start: 0, end: 2 });
        let w = window("c", &IDS, &args(Some(2), None, Some(20), None)).unwrap();
        assert_eq!(w, Window { start: 2, end: 4 });
        let w = window("c", &IDS, &args(Some(2), None, Some(40), None)).unwrap();
        assert_eq!(w, Window { start: 4, end: 5 });
        let w = window("c", &IDS, &args(Some(2), None, Some(50), None)).unwrap();
        assert_eq!(w, Window { start: 5, end: 5 });
    }

    #[test]
    fn last_and_before_page_backwards() {
        let w = window("c", &IDS, &args(None, Some(2), None, None)).unwrap();
        assert_eq!(w, Window { start: 3, end: 5 });
        let w = window("c", &IDS, &args(None, Some(2), None, Some(30))).unwrap();
        assert_eq!(w, Window { start: 0, end: 2 });
    }

    #[test]
    fn cursor_of_a_vanished_item_still_works() {
        // Item 30 hidden (e.g. pending): after=30 continues at 40.
        let w = window("c", &[10, 20, 40, 50], &args(Some(1), None, Some(30), None)).unwrap();
        assert_eq!(w, Window { start: 2, end: 3 });
    }

    #[test]
    fn github_limits_and_messages() {
        let err = window("reviewThreads", &IDS, &args(Some(101), None, None, None)).unwrap_err();
        assert_eq!(
            err.message,
            "Requesting 101 records on the `reviewThreads` connection exceeds the `first` limit of 100 records."
        );
        let err = window("comments", &IDS, &args(None, Some(250), None, None)).unwrap_err();
        assert!(
            err.message.contains("exceeds the `last` limit of 100"),
            "{}",
            err.message
        );
        let err = window("reviewThreads", &IDS, &PageArgs::default()).unwrap_err();
        assert_eq!(
            err.message,
            "You must provide a `first` or `last` value to properly paginate the `reviewThreads` connection."
        );
        assert!(window("c", &IDS, &args(Some(100), None, None, None)).is_ok());
        assert!(window("c", &IDS, &args(Some(-1), None, None, None)).is_err());
        let bad = PageArgs {
            first: Some(1),
            after: Some("nope".into()),
            ..PageArgs::default()
        };
        assert!(window("c", &IDS, &bad).is_err());
    }

    #[test]
    fn a_slice_pages_like_a_list() {
        let items: Vec<(u64, i32)> = IDS.iter().map(|id| (*id, *id as i32)).collect();
        for a in [
            args(Some(2), None, Some(10), None),
            args(Some(2), None, Some(50), None),
            args(None, Some(2), None, Some(40)),
            args(Some(100), None, Some(25), None),
        ] {
            let list = paginate("c", items.clone(), &a).unwrap();
            let slice = paginate_slice("c", &items, |(id, _)| *id, &a, |i| items[i].1).unwrap();
            assert_eq!(list.items, slice.items);
            assert_eq!(list.page_info, slice.page_info);
            assert_eq!(list.total_count, slice.total_count);
        }
    }

    #[test]
    fn page_info_is_truthful() {
        let items: Vec<(u64, i32)> = IDS.iter().map(|id| (*id, *id as i32)).collect();
        let c = paginate("c", items.clone(), &args(Some(2), None, Some(10), None)).unwrap();
        assert_eq!(c.total_count, 5);
        assert!(c.page_info.has_next_page);
        assert!(c.page_info.has_previous_page);
        assert_eq!(c.page_info.start_cursor, Some(ids::cursor(20)));
        assert_eq!(c.page_info.end_cursor, Some(ids::cursor(30)));
        let nodes: Vec<i32> = c.items.into_iter().map(|(_, n)| n).collect();
        assert_eq!(nodes, vec![20, 30]);
        let empty = paginate("c", items, &args(Some(2), None, Some(50), None)).unwrap();
        assert_eq!(empty.page_info.end_cursor, None);
        assert!(!empty.page_info.has_next_page);
    }
}
