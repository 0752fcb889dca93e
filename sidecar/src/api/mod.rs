//! HTTP and WebSocket API (docs/protocol.md): router, auth middleware, handlers.
//!
//! Architecture Invariant: handlers rebuild every request field by field before it reaches
//! the `pty` module; all errors leave through [`ApiError`].

mod auth;
mod body;
mod browser_control;
mod browser_handoff;
mod browser_input;
mod browser_logs;
mod browser_page;
mod browser_pane;
mod browser_read;
mod browser_sealed;
mod browsers;
pub mod conn;
mod control;
mod credentials;
mod drivers;
mod error;
mod misc;
mod panes;
mod ports;
mod project;
mod proxy;
mod remotes;
mod socket;
mod state;
mod terminals;
mod ui_socket;

pub use credentials::Auth;
pub use error::ApiError;
pub use state::{AppState, ServerConfig};

use axum::extract::DefaultBodyLimit;
use axum::routing::{any, delete, get, patch, post};
use axum::{middleware, Router};

use crate::constants::MAX_BODY_BYTES;

/// The whole app: every route of protocol §4 and §5 behind [`auth::guard`], bodies capped at
/// 256 KiB (declared or read), errors (405 included) in the JSON shape of protocol §3.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/health", get(misc::health))
        .route("/api/config", get(misc::config))
        .route("/api/config/agent-sealed", patch(misc::patch_agent_sealed))
        .route("/api/config/terminal", patch(misc::patch_terminal))
        .route("/api/config/agent", patch(misc::patch_agent))
        .route("/api/drivers", get(drivers::list).put(drivers::hand_over))
        .route("/api/handoffs/{pane}", post(browser_handoff::answer))
        .route("/api/login-codes", post(misc::login_codes))
        .route("/login", get(misc::login))
        .route("/api/terminals", post(terminals::create).get(terminals::list))
        .route("/api/terminals/{id}", get(terminals::get_one).delete(terminals::delete))
        .route("/api/terminals/{id}/socket", get(socket::upgrade))
        .route("/api/terminals/{id}/resolve", post(terminals::resolve))
        .route("/api/browsers", post(browsers::create).get(browsers::list))
        .route("/api/browsers/{id}", get(browsers::get_one).delete(browsers::delete))
        .route("/api/browsers/{id}/navigate", post(browsers::navigate))
        .route("/api/browsers/{id}/history", post(browsers::history))
        .route("/api/browsers/{id}/reload", post(browsers::reload))
        .route("/api/browsers/{id}/unload", post(browsers::unload))
        .route("/api/browsers/{id}/sealed-probe", post(browsers::sealed_probe))
        .route("/api/browsers/{id}/viewport", post(browsers::viewport))
        .route("/api/browsers/{id}/tabs/select", post(browsers::select_tab))
        .route("/api/browsers/{id}/tabs/close", post(browsers::close_tab))
        .route("/api/browsers/{id}/relaunch", post(browsers::relaunch))
        .route("/api/browsers/{id}/popout", post(browsers::pop_out))
        .route("/api/browsers/{id}/popin", post(browsers::pop_in))
        .route("/api/browsers/{id}/file-chooser/{chooser}", post(browsers::answer_file_chooser))
        .route(
            "/api/browsers/{id}/file-chooser/{chooser}/files",
            post(browsers::upload_file).layer(DefaultBodyLimit::max(crate::browser::MAX_UPLOAD_BYTES)),
        )
        .route("/api/capabilities", get(browsers::capabilities))
        .route("/api/browsers/{id}/viewer", post(browsers::grant))
        .route("/viewer/{grant}", get(browsers::upgrade))
        .route("/api/terminals/{id}/ports", get(ports::list))
        .route("/api/workspace", get(misc::get_workspace).put(misc::put_workspace))
        .route("/api/proxy/grants", post(proxy::create).get(proxy::list))
        .route("/api/proxy/grants/{grant}", delete(proxy::revoke))
        .route("/api/remotes", post(remotes::create).get(remotes::list))
        .route("/api/remotes/{id}", get(remotes::get_one).delete(remotes::delete))
        .route("/api/remotes/{id}/reconnect", post(remotes::reconnect))
        .route("/api/remotes/{id}/api/{*rest}", any(remotes::forward))
        .route("/api/shutdown", post(misc::shutdown))
        .route("/api/ui/socket", get(ui_socket::upgrade))
        .route("/api/control/panes", get(control::panes))
        .route("/api/control/send", post(control::send))
        .route("/api/control/read", post(control::read))
        .route("/api/control/wait", post(control::wait))
        .route("/api/control/ports", post(control::ports))
        .route("/api/control/split", post(control::split))
        .route("/api/control/ensure", post(control::ensure))
        .route("/api/control/open", post(control::open))
        .route("/api/control/pane", post(control::pane))
        .route("/api/control/workspace", post(control::workspace))
        .route("/api/control/up", post(project::up))
        .route("/api/project", get(project::get))
        .route("/api/project/trust", post(project::trust))
        .route("/api/control/browser/open", post(browser_control::open_browser))
        .route("/api/control/browser/snapshot", post(browser_control::snapshot))
        .route("/api/control/browser/find", post(browser_read::find))
        .route("/api/control/browser/text", post(browser_read::text))
        .route("/api/control/browser/act", post(browser_control::act))
        .route("/api/control/browser/get", post(browser_control::get))
        .route("/api/control/browser/wait", post(browser_control::wait))
        .route("/api/control/browser/screenshot", post(browser_control::screenshot))
        .route("/api/control/browser/navigate", post(browser_control::navigate))
        .route("/api/control/browser/history", post(browser_control::history))
        .route("/api/control/browser/tabs", post(browser_page::tabs))
        .route("/api/control/browser/dialog", post(browser_control::dialog))
        .route("/api/control/browser/eval", post(browser_control::eval))
        .route("/api/control/browser/select", post(browser_page::select))
        .route("/api/control/browser/set", post(browser_page::set))
        .route("/api/control/browser/scroll", post(browser_page::scroll))
        .route("/api/control/browser/scroll_to", post(browser_page::scroll_to))
        .route("/api/control/browser/viewport", post(browser_page::viewport))
        .route("/api/control/browser/upload", post(browser_input::upload))
        .route("/api/control/browser/drag", post(browser_input::drag))
        .route("/api/control/browser/console", post(browser_logs::console))
        .route("/api/control/browser/network", post(browser_logs::network))
        .route("/api/control/browser/route", post(browser_logs::route))
        .route("/api/control/browser/offline", post(browser_logs::offline))
        .route("/api/control/browser/events", post(browser_logs::events))
        .route("/api/control/browser/downloads", post(browser_logs::downloads))
        .route("/api/control/browser/policy", get(browser_sealed::policy))
        .route("/api/control/browser/stats", post(browser_sealed::stats))
        .route("/api/control/browser/focus_walk", post(browser_sealed::focus_walk))
        .route("/api/control/browser/handoff", post(browser_handoff::handoff))
        .fallback(misc::fallback)
        .method_not_allowed_fallback(misc::method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(body::refuse_oversized))
        .layer(middleware::from_fn_with_state(state.clone(), auth::guard))
        .with_state(state)
}
