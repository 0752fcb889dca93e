//! Protocol constants shared by the PTY hub and the HTTP/WebSocket API (docs/protocol.md).
//!
//! Grouped by concern, unit in every name. The invariants between them are asserted by the
//! unit test at the bottom of this file.

/// Protocol version reported by `GET /api/health` and the ready line.
pub const PROTOCOL_VERSION: u32 = 1;

// ---- Flow control (protocol §5.1) ----

/// A client with more than this many unacknowledged bytes of live output (replay and
/// catch-ups excluded) falls behind: nothing more is queued to it until it catches up
/// (protocol §5.4). It bounds what is queued to a client that stops reading, and so what a
/// window must still draw after Ctrl-C (VS Code pauses at 100,000 characters).
pub const HIGH_WATERMARK_BYTES: u64 = 192 * 1024;
/// A client that fell behind catches up once it has less than this many unacknowledged bytes
/// of live output. More than one batch: the catch-up is made while a batch is still queued
/// to it, so it never idles waiting.
pub const LOW_WATERMARK_BYTES: u64 = 128 * 1024;
/// Clients should acknowledge processed output at least every this many bytes.
/// Must be ≤ `LOW_WATERMARK_BYTES` or a client acking in chunks could never catch up.
pub const ACK_CHUNK_BYTES: u64 = 32 * 1024;
/// Largest `bytes` value accepted in one ack message (2^32).
pub const MAX_ACK_BYTES: u64 = 1 << 32;
/// At most one attention event (bell, notification, long command done) per terminal this
/// often, in milliseconds: a `yes $'\a'` must not flood the desktop (protocol §5.3).
pub const ATTENTION_MIN_INTERVAL_MS: u64 = 1_000;
/// A command that ran at least this long, in milliseconds, wants attention when it ends
/// (DESIGN §13).
pub const LONG_COMMAND_MS: u64 = 10_000;

// ---- Output batching (protocol §5) ----

/// A batch of PTY output is flushed once it holds this many bytes.
pub const BATCH_MAX_BYTES: usize = 64 * 1024;
/// A batch is flushed at the latest this many microseconds after its first byte was read.
pub const BATCH_MAX_DELAY_US: u64 = 4_000;

// ---- Scrollback ----

/// Bytes of output kept per terminal and replayed to a client on attach.
pub const SCROLLBACK_BYTES: usize = 4 * 1024 * 1024;
/// Lines of history the screen model keeps per terminal (tmux's default `history-limit`):
/// `ph read --scrollback N` returns at most this many.
pub const SCREEN_HISTORY_LINES: usize = 2_000;
/// Scrollback replay is sent in binary messages of at most this many bytes.
pub const REPLAY_CHUNK_BYTES: usize = 64 * 1024;

// ---- Request bounds ----

/// Largest HTTP request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// Largest inbound WebSocket message (input bytes or control JSON), in bytes.
pub const MAX_WS_MESSAGE_BYTES: usize = 64 * 1024;
/// Smallest and largest terminal size in columns and in rows.
pub const MIN_TERMINAL_CELLS: u16 = 1;
/// Largest terminal size in columns and in rows.
pub const MAX_TERMINAL_CELLS: u16 = 1000;
/// Largest number of items in a terminal's `command`.
pub const MAX_COMMAND_ITEMS: usize = 256;
/// Largest length of one `command` item, in bytes.
pub const MAX_COMMAND_ITEM_BYTES: usize = 4096;
/// Largest number of outstanding one-time login codes (the oldest is dropped).
pub const MAX_LOGIN_CODES: usize = 64;
/// Largest number of live browser sessions (the oldest is dropped).
pub const MAX_SESSIONS: usize = 1024;

// ---- Agent browsing (protocol §9) ----

/// How long a mutating `ph browser` verb waits for the one before it on the same tab, in
/// milliseconds; past it the verb is refused `tab_busy` and nothing is done.
pub const TURN_WAIT_MS: u64 = 10_000;

// ---- Browser viewports and zoom (protocol §8.2) ----

/// Smallest viewport width and height, in CSS pixels.
pub const MIN_VIEWPORT_CSS_PX: u32 = 100;
/// Largest viewport width and height, in CSS pixels (8K).
pub const MAX_VIEWPORT_CSS_PX: u32 = 7680;
/// Smallest viewport device pixel ratio (device pixels per CSS pixel).
pub const MIN_VIEWPORT_DPR: f64 = 0.5;
/// Largest viewport device pixel ratio.
pub const MAX_VIEWPORT_DPR: f64 = 4.0;
/// The default viewport (the Desktop preset): a new browser's fixed size when the create
/// names none, and the size a pane-mode browser has until a view sends its pane's size.
/// Width in CSS pixels.
pub const DEFAULT_VIEWPORT_WIDTH_CSS_PX: u32 = 1440;
/// The default viewport's height, in CSS pixels.
pub const DEFAULT_VIEWPORT_HEIGHT_CSS_PX: u32 = 900;
/// The default viewport's device pixel ratio.
pub const DEFAULT_VIEWPORT_DPR: f64 = 1.0;
/// Smallest page zoom factor (Chromium's lowest level, 25 %).
pub const MIN_ZOOM: f64 = 0.25;
/// Largest page zoom factor (Chromium's highest level, 500 %).
pub const MAX_ZOOM: f64 = 5.0;

// ---- Process lifecycle ----

/// Delay between SIGHUP and SIGKILL when killing a terminal's process group, in milliseconds.
pub const KILL_GRACE_MS: u64 = 2_000;
/// After the child is reaped, how long the PTY may stay quiet (held open by a stray
/// background process) before the `exit` message is sent anyway, in milliseconds.
pub const EXIT_QUIET_MS: u64 = 1_000;
/// The whole shutdown (hang up, kill, reap) is bounded by this many milliseconds.
pub const SHUTDOWN_BOUND_MS: u64 = 4_500;

#[cfg(test)]
#[allow(clippy::assertions_on_constants)]
mod tests {
    use super::*;

    #[test]
    fn flow_control_invariants_hold() {
        assert!(ACK_CHUNK_BYTES <= LOW_WATERMARK_BYTES);
        assert!(LOW_WATERMARK_BYTES < HIGH_WATERMARK_BYTES);
        assert!(LOW_WATERMARK_BYTES > BATCH_MAX_BYTES as u64, "resume with a batch still queued");
        assert!(HIGH_WATERMARK_BYTES <= MAX_ACK_BYTES);
        // Issue #12: at xterm.js's ~1.5 MB/s, what a window still draws after Ctrl-C (the
        // watermark plus one batch) takes well under 0.5 s.
        assert!(HIGH_WATERMARK_BYTES + BATCH_MAX_BYTES as u64 <= 256 * 1024);
    }

    #[test]
    fn batching_and_scrollback_invariants_hold() {
        assert!(SCROLLBACK_BYTES >= 4 * 1024 * 1024, "design §7: ring ≥ 4 MiB");
        assert!(BATCH_MAX_BYTES <= 64 * 1024);
        assert!(BATCH_MAX_DELAY_US <= 4_000);
        assert!(REPLAY_CHUNK_BYTES <= SCROLLBACK_BYTES);
        assert!(BATCH_MAX_BYTES as u64 <= HIGH_WATERMARK_BYTES - LOW_WATERMARK_BYTES);
    }

    #[test]
    fn bounds_invariants_hold() {
        assert!(MIN_TERMINAL_CELLS >= 1 && MIN_TERMINAL_CELLS <= MAX_TERMINAL_CELLS);
        assert!(MAX_COMMAND_ITEMS * MAX_COMMAND_ITEM_BYTES >= MAX_BODY_BYTES);
        assert!(KILL_GRACE_MS < SHUTDOWN_BOUND_MS && SHUTDOWN_BOUND_MS < 5_000);
    }

    #[test]
    fn viewport_and_zoom_invariants_hold() {
        assert!(MIN_VIEWPORT_CSS_PX >= 1 && MIN_VIEWPORT_CSS_PX < MAX_VIEWPORT_CSS_PX);
        assert!(MIN_VIEWPORT_DPR > 0.0 && MIN_VIEWPORT_DPR < MAX_VIEWPORT_DPR);
        let sides = MIN_VIEWPORT_CSS_PX..=MAX_VIEWPORT_CSS_PX;
        assert!(sides.contains(&DEFAULT_VIEWPORT_WIDTH_CSS_PX) && sides.contains(&DEFAULT_VIEWPORT_HEIGHT_CSS_PX));
        assert!((MIN_VIEWPORT_DPR..=MAX_VIEWPORT_DPR).contains(&DEFAULT_VIEWPORT_DPR));
        assert!(MIN_ZOOM > 0.0 && MIN_ZOOM < 1.0 && 1.0 < MAX_ZOOM, "1 (no zoom) is inside the range");
    }

    /// Evaluates `export const NAME = <product of integers>;` from the UI's protocol mirror.
    fn ts_const(src: &str, name: &str) -> Option<u64> {
        let decl = format!("export const {name} = ");
        let start = src.find(&decl)? + decl.len();
        let expr = &src[start..start + src[start..].find(';')?];
        expr.split('*').map(|f| f.trim().replace('_', "").parse::<u64>().ok()).product()
    }

    /// Reads `export const NAME = <decimal number>;` from the UI's protocol mirror.
    fn ts_f64(src: &str, name: &str) -> Option<f64> {
        let decl = format!("export const {name} = ");
        let start = src.find(&decl)? + decl.len();
        src[start..start + src[start..].find(';')?].trim().replace('_', "").parse().ok()
    }

    #[test]
    fn rust_and_typescript_viewport_and_zoom_values_agree() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/src/api/protocol.ts");
        let src = std::fs::read_to_string(path).expect("ui/src/api/protocol.ts");
        assert_eq!(ts_const(&src, "MIN_VIEWPORT_CSS_PX"), Some(u64::from(MIN_VIEWPORT_CSS_PX)));
        assert_eq!(ts_const(&src, "MAX_VIEWPORT_CSS_PX"), Some(u64::from(MAX_VIEWPORT_CSS_PX)));
        assert_eq!(ts_f64(&src, "MIN_VIEWPORT_DPR"), Some(MIN_VIEWPORT_DPR));
        assert_eq!(ts_f64(&src, "MAX_VIEWPORT_DPR"), Some(MAX_VIEWPORT_DPR));
        assert_eq!(ts_f64(&src, "MIN_ZOOM"), Some(MIN_ZOOM));
        assert_eq!(ts_f64(&src, "MAX_ZOOM"), Some(MAX_ZOOM));
        assert_eq!(ts_const(&src, "DEFAULT_VIEWPORT_WIDTH_CSS_PX"), Some(u64::from(DEFAULT_VIEWPORT_WIDTH_CSS_PX)));
        assert_eq!(ts_const(&src, "DEFAULT_VIEWPORT_HEIGHT_CSS_PX"), Some(u64::from(DEFAULT_VIEWPORT_HEIGHT_CSS_PX)));
        assert_eq!(ts_f64(&src, "DEFAULT_VIEWPORT_DPR"), Some(DEFAULT_VIEWPORT_DPR));
    }

    #[test]
    fn rust_and_typescript_flow_control_values_agree() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/src/api/protocol.ts");
        let src = std::fs::read_to_string(path).expect("ui/src/api/protocol.ts");
        assert_eq!(ts_const(&src, "HIGH_WATERMARK_BYTES"), Some(HIGH_WATERMARK_BYTES));
        assert_eq!(ts_const(&src, "LOW_WATERMARK_BYTES"), Some(LOW_WATERMARK_BYTES));
        assert_eq!(ts_const(&src, "ACK_CHUNK_BYTES"), Some(ACK_CHUNK_BYTES));
        assert_eq!(ts_const(&src, "PROTOCOL_VERSION"), Some(u64::from(PROTOCOL_VERSION)));
        assert_eq!(ts_const(&src, "MAX_TERMINAL_DIM"), Some(u64::from(MAX_TERMINAL_CELLS)));
        assert_eq!(ts_const(&src, "MIN_TERMINAL_DIM"), Some(u64::from(MIN_TERMINAL_CELLS)));
    }
}
