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

/// The real probe: `kill(pid, 0)`, which sends nothing and says whether
/// the process exists (a zombie counts as alive). A process of another
/// user exists too (`EPERM`). Process-id reuse can make a dead holder look
/// alive; `Store::break_lock` is the way out then.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemProbe;

impl ProcessProbe for SystemProbe {
    fn is_alive(&self, pid: u32) -> bool {
        use nix::errno::Errno;
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            // 0 and negative ids name process groups, not a process.
            return false;
        }
        match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
            Ok(()) | Err(Errno::EPERM) => true,
            Err(Errno::ESRCH) => false,
            // Unknown means "maybe alive": never take over a live lock by mistake.
            Err(_) => true,
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
        assert!(
            !SystemProbe.is_alive(u32::MAX),
            "not a pid: a process group"
        );
    }

    #[test]
    fn a_zombie_and_another_users_process_are_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Exited but not reaped: a zombie holds its pid, as `kill -0` says.
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(SystemProbe.is_alive(pid));
        child.wait().unwrap();
        // Pid 1 (init, another user's or ours in a container) exists.
        assert!(SystemProbe.is_alive(1));
    }

    #[test]
    fn hostname_is_not_empty() {
        assert!(!local_hostname().is_empty());
    }
}
