//! Process-group plumbing for the sidecar child, one implementation per platform.
//!
//! Safety rule (DESIGN.md §6): only pids this process spawned are signalled, and
//! never pid 0, 1 or -1.

#[derive(Clone, Copy, Debug)]
pub enum Signal {
    Term,
    Kill,
}

pub use imp::{exited, own_group, signal_group};

#[cfg(unix)]
mod imp {
    use super::Signal;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    /// Makes the child the leader of a new process group, and (Linux) asks the
    /// kernel to SIGTERM it if the spawning thread dies, so a crashed shell does
    /// not leave a sidecar behind.
    pub fn own_group(cmd: &mut Command) {
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        unsafe {
            // SAFETY: prctl and getppid are async-signal-safe; nothing allocates.
            let parent = libc::getpid();
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent died between fork and prctl: exit rather than linger.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }

    /// Sends `signal` to the process group `pgid` (a group this process created
    /// by spawning its leader). Refuses pgid ≤ 1. ESRCH (no such group) is fine.
    pub fn signal_group(pgid: u32, signal: Signal) {
        let Ok(pgid) = libc::pid_t::try_from(pgid) else {
            return;
        };
        if pgid <= 1 {
            return;
        }
        let sig = match signal {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        // SAFETY: plain syscall; pgid > 1 so this never targets every process.
        if unsafe { libc::kill(-pgid, sig) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::ESRCH) {
                eprintln!("porthole: kill(-{pgid}, {sig}) failed: {err}");
            }
        }
    }

    /// `Some(description)` if and only if the child `pid` has exited. Does not reap
    /// it (`WNOWAIT`), so its pid stays reserved until `Child::wait`.
    pub fn exited(pid: u32) -> Option<String> {
        let pid = libc::id_t::from(pid);
        // SAFETY: waitid writes only into `info`, which we own.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT);
            if rc != 0 {
                // ECHILD: already reaped; count it as exited.
                return Some("already reaped".into());
            }
            if info.si_pid() == 0 {
                return None;
            }
            let status = info.si_status();
            Some(match info.si_code {
                libc::CLD_EXITED => format!("exit status {status}"),
                _ => format!("killed by signal {status}"),
            })
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use super::Signal;
    use std::process::Command;

    pub fn own_group(_cmd: &mut Command) {}

    /// Without process groups the sidecar is killed by pid through `taskkill /T`.
    pub fn signal_group(pid: u32, _signal: Signal) {
        let _ = Command::new("taskkill").args(["/T", "/F", "/PID", &pid.to_string()]).status();
    }

    pub fn exited(_pid: u32) -> Option<String> {
        None
    }
}
