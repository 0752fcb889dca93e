//! Ctrl-C handling for `cargo xtask run`: xtask survives SIGINT/SIGTERM and waits
//! for its child to shut down, instead of dying and leaving it behind.
//!
//! std has no signal API; two libc calls are declared here (std links libc anyway).
//! A handler (not SIG_IGN) is installed so that children get the default
//! disposition back on exec.

use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::util::Failed;

static GOT_SIGNAL: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
mod sys {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn kill(pid: i32, sig: i32) -> i32;
    }
    pub const SIGINT: i32 = 2;
    pub const SIGTERM: i32 = 15;

    extern "C" fn on_signal(_: i32) {
        super::GOT_SIGNAL.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn install() {
        // SAFETY: the handler only stores to an atomic (async-signal-safe).
        unsafe {
            signal(SIGINT, on_signal as extern "C" fn(i32) as usize);
            signal(SIGTERM, on_signal as extern "C" fn(i32) as usize);
        }
    }

    /// Sends SIGTERM to `pid`, a child this process spawned (never 0, 1 or -1).
    pub fn terminate(pid: u32) {
        if let Ok(pid) = i32::try_from(pid) {
            if pid > 1 {
                // SAFETY: plain syscall on our own child's pid.
                unsafe { kill(pid, SIGTERM) };
            }
        }
    }
}

#[cfg(not(unix))]
mod sys {
    pub fn install() {}
    pub fn terminate(_pid: u32) {}
}

pub fn install() {
    sys::install();
}

/// Spawns `cmd` and waits for it, forwarding a shutdown request (see `wait_forwarding`).
pub fn run_forwarding(cmd: &mut Command) -> Result<(), Failed> {
    let child = cmd
        .spawn()
        .map_err(|e| Failed(format!("failed to start {:?}: {e}", cmd.get_program())))?;
    wait_forwarding(child)
}

/// Waits for `child`. On Ctrl-C the terminal already signals the whole foreground
/// group (the child included); a SIGTERM or SIGINT sent to xtask alone is passed on
/// as one SIGTERM. Either way the child shuts itself down and xtask waits for it.
pub fn wait_forwarding(mut child: Child) -> Result<(), Failed> {
    let mut forwarded = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return if status.success() || GOT_SIGNAL.load(Ordering::SeqCst) {
                    Ok(())
                } else {
                    Err(Failed(format!("exited with {status}")))
                };
            }
            Ok(None) => {}
            Err(e) => return Err(Failed(format!("waitpid failed: {e}"))),
        }
        if !forwarded && GOT_SIGNAL.load(Ordering::SeqCst) {
            forwarded = true;
            // Give a terminal-delivered SIGINT a moment to be handled first.
            std::thread::sleep(Duration::from_millis(300));
            if matches!(child.try_wait(), Ok(None)) {
                sys::terminate(child.id());
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
