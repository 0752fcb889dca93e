//! Who is calling a control verb: a leaf both the auth guard (`api/auth.rs`, which puts it
//! on the request) and the control plane's verbs name, so neither imports the other.

use super::handle::Handle;

/// The calling pane: `Some` for a live pane token (the pane it names), `None` for the
/// master token or a session cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller(pub Option<Handle>);
