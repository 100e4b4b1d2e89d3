//! Background work (CI jobs, reviewer bots' delays): counted, so that
//! `wait-idle` knows when nothing is pending, and abortable, so that a reset
//! or a shutdown stops it.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::AbortHandle;

/// The background tasks of one emulator.
pub(crate) struct Tasks {
    pending: Arc<watch::Sender<usize>>,
    handles: Mutex<Vec<AbortHandle>>,
}

/// Decrements the pending count when the task ends or is aborted.
struct PendingGuard(Arc<watch::Sender<usize>>);

impl Drop for PendingGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Tasks {
    pub(crate) fn new() -> Tasks {
        Tasks {
            pending: Arc::new(watch::channel(0).0),
            handles: Mutex::new(Vec::new()),
        }
    }

    /// Spawns `work` as pending background work.
    pub(crate) fn spawn<F>(&self, work: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.pending.send_modify(|n| *n += 1);
        let guard = PendingGuard(self.pending.clone());
        let handle = tokio::spawn(async move {
            let _guard = guard;
            work.await;
        });
        let mut handles = self.handles.lock().unwrap_or_else(PoisonError::into_inner);
        handles.retain(|h| !h.is_finished());
        handles.push(handle.abort_handle());
    }

    /// How many tasks are pending.
    pub(crate) fn pending(&self) -> usize {
        *self.pending.borrow()
    }

    /// Aborts every task (their pending counts drop as they unwind).
    pub(crate) fn abort_all(&self) {
        let handles: Vec<AbortHandle> = self
            .handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect();
        for handle in handles {
            handle.abort();
        }
    }

    /// Waits until no task is pending; `false` on time-out.
    pub(crate) async fn wait_idle(&self, timeout: Duration) -> bool {
        let mut rx = self.pending.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|n| *n == 0))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn counts_and_waits() {
        let tasks = Tasks::new();
        assert!(tasks.wait_idle(Duration::from_millis(10)).await);
        tasks.spawn(async { tokio::time::sleep(Duration::from_millis(50)).await });
        assert_eq!(tasks.pending(), 1);
        assert!(!tasks.wait_idle(Duration::from_millis(5)).await);
        assert!(tasks.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(tasks.pending(), 0);
    }

    #[tokio::test]
    async fn aborted_tasks_are_no_longer_pending() {
        let tasks = Tasks::new();
        tasks.spawn(async { tokio::time::sleep(Duration::from_secs(60)).await });
        tasks.abort_all();
        assert!(tasks.wait_idle(Duration::from_secs(5)).await);
    }
}
