//! Is a process alive? The question stale-lock detection asks.

/// Tells whether a process of this host is alive.
///
/// The store asks it about a lock holder on the same host; tests substitute
/// a closure to simulate a dead holder.
pub trait ProcessProbe: Send + Sync {
    /// Whether process `pid` of this host exists.
    fn is_alive(&self, pid: u32) -> bool;
}

impl<F: Fn(u32) -> bool + Send + Sync> ProcessProbe for F {
    fn is_alive(&self, pid: u32) -> bool {
        self(pid)
    }
}

/// The real probe: `kill(pid, 0)` semantics.
///
/// On Linux it looks for `/proc/<pid>` (a zombie counts as alive, as with
/// `kill`); elsewhere it runs `kill -0 <pid>`. Process-id reuse can make a
/// dead holder look alive; `Store::break_lock` is the way out then.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemProbe;

impl ProcessProbe for SystemProbe {
    fn is_alive(&self, pid: u32) -> bool {
        if pid == 0 {
            return false;
        }
        if cfg!(target_os = "linux") {
            std::path::Path::new("/proc").join(pid.to_string()).exists()
        } else {
            std::process::Command::new("kill")
                .arg("-0")
                .arg(pid.to_string())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .map(|s| s.success())
                // Unknown means "maybe alive": never take over a live lock by mistake.
                .unwrap_or(true)
        }
    }
}

/// This host's name, best effort (`/proc/sys/kernel/hostname`, `/etc/hostname`,
/// `$HOSTNAME`, else `localhost`).
pub fn local_hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .chain(std::env::var("HOSTNAME").ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_an_exited_child_is_not() {
        assert!(SystemProbe.is_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap(); // reaped: the pid is gone
        assert!(!SystemProbe.is_alive(pid));
        assert!(!SystemProbe.is_alive(0));
    }

    #[test]
    fn hostname_is_not_empty() {
        assert!(!local_hostname().is_empty());
    }
}
