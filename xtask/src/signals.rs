//! Ctrl-C handling for `cargo xtask run`: xtask survives SIGINT/SIGTERM and waits
//! for its child to shut down, instead of dying and leaving it behind.
//!
//! The child runs in its own process group, so a Ctrl-C at the terminal reaches xtask
//! only, and xtask passes exactly one signal on (the child's shutdown is not cut short
//! by a second one). std has no signal API; two libc calls are declared here (std
//! links libc anyway). A handler (not SIG_IGN) is installed so that children get the
//! default disposition back on exec.

use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use crate::util::Failed;

/// The last signal received (0: none yet).
static GOT_SIGNAL: AtomicI32 = AtomicI32::new(0);

#[cfg(unix)]
mod sys {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn kill(pid: i32, sig: i32) -> i32;
    }
    pub const SIGINT: i32 = 2;
    pub const SIGTERM: i32 = 15;

    extern "C" fn on_signal(sig: i32) {
        super::GOT_SIGNAL.store(sig, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn install() {
        // SAFETY: the handler only stores to an atomic (async-signal-safe).
        unsafe {
            signal(SIGINT, on_signal as extern "C" fn(i32) as usize);
            signal(SIGTERM, on_signal as extern "C" fn(i32) as usize);
        }
    }

    /// Sends `sig` to `pid`, a child this process spawned (never 0, 1 or -1).
    pub fn send(pid: u32, sig: i32) {
        if let Ok(pid) = i32::try_from(pid) {
            if pid > 1 {
                // SAFETY: plain syscall on our own child's pid.
                unsafe { kill(pid, sig) };
            }
        }
    }

    pub fn own_group(cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
}

#[cfg(not(unix))]
mod sys {
    pub fn install() {}
    pub fn send(_pid: u32, _sig: i32) {}
    pub fn own_group(_cmd: &mut std::process::Command) {}
}

pub fn install() {
    sys::install();
}

/// Puts `cmd` in its own process group; spawn it after this and wait with
/// [`wait_forwarding`].
pub fn own_group(cmd: &mut Command) {
    sys::own_group(cmd);
}

/// Spawns `cmd` in its own process group and waits for it, forwarding a shutdown
/// request (see [`wait_forwarding`]).
pub fn run_forwarding(cmd: &mut Command) -> Result<(), Failed> {
    own_group(cmd);
    let child = cmd.spawn().map_err(|e| Failed(format!("failed to start {:?}: {e}", cmd.get_program())))?;
    wait_forwarding(child)
}

/// Waits for `child` (spawned in its own process group). The first SIGINT or SIGTERM
/// xtask receives is passed on to the child once; the child shuts itself down and
/// xtask waits for it.
pub fn wait_forwarding(mut child: Child) -> Result<(), Failed> {
    let mut forwarded = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return if status.success() || GOT_SIGNAL.load(Ordering::SeqCst) != 0 {
                    Ok(())
                } else {
                    Err(Failed(format!("exited with {status}")))
                };
            }
            Ok(None) => {}
            Err(e) => return Err(Failed(format!("waitpid failed: {e}"))),
        }
        let sig = GOT_SIGNAL.load(Ordering::SeqCst);
        if !forwarded && sig != 0 {
            forwarded = true;
            sys::send(child.id(), sig);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
