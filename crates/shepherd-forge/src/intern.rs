//! One copy of each repeated string of a fetch.
//!
//! Every comment of a review thread carries the same diff hunk, and every
//! thread on the same line of a file carries the same one too; at 10,000
//! threads the hunks would otherwise be most of a snapshot's memory. The
//! client hands each decoded hunk to an [`Interner`] and keeps the shared
//! `Arc<str>` it returns.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// A set of shared strings; cheap to consult from concurrent page fetches.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    strings: Mutex<HashSet<Arc<str>>>,
}

impl Interner {
    /// The shared copy of `text`: the one already held, else `text` itself,
    /// kept for the next caller.
    pub(crate) fn intern(&self, text: String) -> Arc<str> {
        // A poisoned set is still a valid set (the insert cannot half-happen).
        let mut strings = self.strings.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(shared) = strings.get(text.as_str()) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(text);
        strings.insert(Arc::clone(&shared));
        shared
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_one_copy() {
        let interner = Interner::default();
        let a = interner.intern("@@ -1 +1 @@\n+x".to_owned());
        let b = interner.intern("@@ -1 +1 @@\n+x".to_owned());
        let c = interner.intern("@@ -2 +2 @@\n+y".to_owned());
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(&*c, "@@ -2 +2 @@\n+y");
    }
}
