//! Errors of the PTY module.

use std::fmt;

/// Everything that can go wrong creating or driving a terminal.
#[derive(Debug)]
pub enum PtyError {
    /// Occurs when `openpty(3)` (or duplicating its master fd, or taking its writer) fails.
    Open(String),
    /// Occurs when the program cannot be started on the PTY (not found, not executable, …).
    Spawn {
        /// `argv[0]` of the program that failed to start.
        program: String,
        /// What the OS or portable-pty said.
        reason: String,
    },
    /// Occurs when `ioctl(TIOCSWINSZ)` fails.
    Resize(String),
    /// Occurs when an ack is 0, over 2^32, or larger than the client's unacknowledged bytes.
    AckOutOfRange {
        /// The acked byte count.
        acked: u64,
        /// Bytes sent to the client and not yet acknowledged.
        unacked: u64,
    },
    /// Occurs when input is written to a terminal whose writer has gone away.
    Closed,
    /// Occurs when a spawn would exceed the limit on terminals (running, or exited and not
    /// deleted yet).
    TooMany {
        /// The limit (`--max-terminals`).
        limit: usize,
    },
}

impl fmt::Display for PtyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtyError::Open(e) => write!(f, "failed to open a pty: {e}"),
            PtyError::Spawn { program, reason } => {
                write!(f, "failed to spawn '{program}': {reason}")
            }
            PtyError::Resize(e) => write!(f, "ioctl(TIOCSWINSZ) failed: {e}"),
            PtyError::AckOutOfRange { acked, unacked } => write!(
                f,
                "ack of {acked} bytes is out of range (1..=2^32 and at most the {unacked} unacknowledged bytes)"
            ),
            PtyError::Closed => write!(f, "terminal is closed"),
            PtyError::TooMany { limit } => {
                write!(f, "{limit} terminals are open, the most this sidecar runs at once: close one first")
            }
        }
    }
}

impl std::error::Error for PtyError {}
