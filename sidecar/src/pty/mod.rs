//! PTY sessions: spawn programs on pseudo-terminals, scrollback, multi-client output with
//! flow control, kill and reap.
//!
//! Architecture Invariant: this module knows nothing of HTTP or WebSockets. Callers attach
//! with [`Terminal::attach`] and get bytes and events; they ack through [`ClientHandle`].

mod error;
mod flow;
mod hub;
mod id;
mod integration;
mod marks;
mod queries;
mod registry;
mod ring;
mod screen;
mod shell;
mod sys;
mod terminal;

pub use error::PtyError;
pub use hub::{Attachment, CatchUp, CatchUpJob, ClientHandle, Event};
pub use id::{BadTerminalId, TerminalId};
pub use integration::{Attention, Running, ShellInfo};
pub use registry::Registry;
pub use screen::ScreenText;
pub use shell::INTEGRATION_VAR;
pub use terminal::{ShellChoice, SpawnSpec, Survivor, Terminal, TerminalInfo};

/// The user's home directory (`$HOME`, else the password database, else `/`): the default
/// working directory of a new terminal.
pub fn home_dir() -> String {
    sys::home_dir()
}
