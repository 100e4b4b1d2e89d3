//! The pull request's timeline as far as the emulator records it: who
//! added or removed a label, and when (GitHub's `LabeledEvent` and
//! `UnlabeledEvent` in `PullRequest.timelineItems`). The REST side of the
//! same events is `GET /repos/{o}/{r}/issues/{n}/events`.

use std::sync::Arc;

use async_graphql::{Enum, Object, SimpleObject, Union, ID};

use super::actor::Actor;
use super::connection::{connection, Page, PageInfo};
use super::label::Label;
use super::scalars::DateTime;
use super::view::PrView;
use crate::ids::{self, NodeKind};
use crate::state::{LabelEventRecord, LabelRecord};

/// The possible item types found in a timeline (the ones the emulator
/// records).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum PullRequestTimelineItemsItemType {
    /// Represents a 'labeled' event on a given issue or pull request.
    LabeledEvent,
    /// Represents an 'unlabeled' event on a given issue or pull request.
    UnlabeledEvent,
}

/// One label event of the pull request (`index` into its events).
#[derive(Clone)]
pub(crate) struct LabelEvent {
    pub(crate) view: Arc<PrView>,
    pub(crate) index: usize,
}

impl LabelEvent {
    fn record(&self) -> &LabelEventRecord {
        &self.view.pr.label_events[self.index]
    }

    fn actor(&self) -> Option<Actor> {
        // An unknown login is a deleted account: GitHub answers null.
        self.view
            .actors
            .get(&self.record().actor)
            .cloned()
            .map(Actor::from_info)
    }

    fn label(&self) -> Label {
        let name = &self.record().label;
        let record = self
            .view
            .repository_labels
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
            .cloned()
            .unwrap_or_else(|| LabelRecord {
                database_id: 0,
                id: String::new(),
                name: name.clone(),
                color: "ededed".to_owned(),
                description: None,
            });
        Label {
            record,
            repository_url: self.view.repository.html_url.clone(),
        }
    }
}

/// A `LabeledEvent` or `UnlabeledEvent` object: the same fields, with
/// GitHub's descriptions (literals, as async-graphql reads them).
macro_rules! label_event_object {
    ($name:ident, $doc:literal, $id_doc:literal, $label_doc:literal) => {
        #[doc = $doc]
        #[derive(Clone)]
        pub(crate) struct $name(pub(crate) LabelEvent);

        #[Object]
        impl $name {
            #[doc = $id_doc]
            async fn id(&self) -> ID {
                ID(ids::node_id(NodeKind::$name, self.0.record().database_id))
            }

            /// Identifies the actor who performed the event.
            async fn actor(&self) -> Option<Actor> {
                self.0.actor()
            }

            /// Identifies the date and time when the object was created.
            async fn created_at(&self) -> DateTime {
                DateTime(self.0.record().created_at.clone())
            }

            #[doc = $label_doc]
            async fn label(&self) -> Label {
                self.0.label()
            }
        }
    };
}

label_event_object!(
    LabeledEvent,
    "Represents a 'labeled' event on a given issue or pull request.",
    "The Node ID of the LabeledEvent object",
    "Identifies the label associated with the 'labeled' event."
);
label_event_object!(
    UnlabeledEvent,
    "Represents an 'unlabeled' event on a given issue or pull request.",
    "The Node ID of the UnlabeledEvent object",
    "Identifies the label associated with the 'unlabeled' event."
);

/// An item in a pull request timeline
#[derive(Clone, Union)]
pub(crate) enum PullRequestTimelineItems {
    /// Represents a 'labeled' event on a given issue or pull request.
    LabeledEvent(LabeledEvent),
    /// Represents an 'unlabeled' event on a given issue or pull request.
    UnlabeledEvent(UnlabeledEvent),
}

impl PullRequestTimelineItems {
    /// Event `index` of the view's pull request.
    pub(crate) fn of(view: &Arc<PrView>, index: usize) -> PullRequestTimelineItems {
        let event = LabelEvent {
            view: view.clone(),
            index,
        };
        if view.pr.label_events[index].added {
            PullRequestTimelineItems::LabeledEvent(LabeledEvent(event))
        } else {
            PullRequestTimelineItems::UnlabeledEvent(UnlabeledEvent(event))
        }
    }

    /// Whether `types` (none: every type) includes event `index`.
    pub(crate) fn wanted(
        view: &PrView,
        index: usize,
        types: Option<&[PullRequestTimelineItemsItemType]>,
    ) -> bool {
        let kind = if view.pr.label_events[index].added {
            PullRequestTimelineItemsItemType::LabeledEvent
        } else {
            PullRequestTimelineItemsItemType::UnlabeledEvent
        };
        types.is_none_or(|types| types.contains(&kind))
    }
}

connection!(
    PullRequestTimelineItemsConnection,
    PullRequestTimelineItemsEdge,
    PullRequestTimelineItems,
    "The connection type for PullRequestTimelineItems."
);
