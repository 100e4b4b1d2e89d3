//! `Label`.

use async_graphql::{Object, ID};

use super::scalars::Uri;
use crate::state::LabelRecord;

/// A label for categorizing Issues, Pull Requests, Milestones, or Discussions.
#[derive(Clone)]
pub(crate) struct Label {
    pub(crate) record: LabelRecord,
    /// The repository's web URL.
    pub(crate) repository_url: String,
}

#[Object]
impl Label {
    /// The Node ID of the Label object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record.id.clone())
    }

    /// Identifies the label name.
    async fn name(&self) -> String {
        self.record.name.clone()
    }

    /// Identifies the label color.
    async fn color(&self) -> String {
        self.record.color.clone()
    }

    /// A brief description of this label.
    async fn description(&self) -> Option<String> {
        self.record.description.clone()
    }

    /// Indicates whether or not this is a default label.
    async fn is_default(&self) -> bool {
        false
    }

    /// The HTTP URL for this label.
    async fn url(&self) -> Uri {
        Uri(format!(
            "{}/labels/{}",
            self.repository_url, self.record.name
        ))
    }
}
