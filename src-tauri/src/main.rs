//! `porthole`: the desktop shell. It spawns `porthole-sidecar`, shows a bundled
//! "Starting Porthole…" page until the sidecar prints its ready line, then navigates
//! the webview to the sidecar's one-time `login_url`, so the UI is served by the
//! sidecar (same origin, cookie auth) exactly as in web mode.
//!
//! Architecture Invariant: this crate holds no product logic. It owns the window,
//! the sidecar process and the quit flow; everything else is the sidecar's or the UI's.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod args;
mod http;
mod layout;
mod process;
mod sidecar;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tauri::{AppHandle, Manager, RunEvent, WindowEvent};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

use sidecar::{Sidecar, StartError};

/// How long the sidecar gets to print its ready line.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the sidecar gets to exit after `POST /api/shutdown` before its
/// process group is killed. The sidecar promises to exit within 5 s.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(6);

/// What the bundled start page shows; returned by the `startup_status` command.
#[derive(Clone, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum Status {
    Starting,
    Ready,
    Failed { reason: String, hint: String, stderr_tail: String },
}

/// The shell's whole state: the startup status and the sidecar process.
struct Shell {
    status: Mutex<Status>,
    /// `None` before spawn, or when spawning failed. Shutdown takes it out.
    sidecar: Mutex<Option<Arc<Sidecar>>>,
    /// Set while a quit is in progress, so a second close request does nothing.
    quitting: AtomicBool,
}

impl Shell {
    fn sidecar(&self) -> Option<Arc<Sidecar>> {
        self.sidecar.lock().unwrap().clone()
    }

    fn set_status(&self, status: Status) {
        *self.status.lock().unwrap() = status;
    }

    /// Shuts the sidecar down (bounded) and forgets it. Idempotent: a second call,
    /// or a call when no sidecar was started, does nothing.
    fn shutdown_sidecar(&self) {
        let taken = self.sidecar.lock().unwrap().take();
        if let Some(sidecar) = taken {
            sidecar.shutdown(SHUTDOWN_GRACE);
        }
    }
}

#[tauri::command]
fn startup_status(shell: tauri::State<'_, Arc<Shell>>) -> Status {
    shell.status.lock().unwrap().clone()
}

fn main() {
    // `porthole --ssh HOST`: a bad HOST is refused here, before any window opens.
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("porthole: {e}");
            std::process::exit(2);
        }
    };
    prepare_environment();

    let shell = Arc::new(Shell {
        status: Mutex::new(Status::Starting),
        sidecar: Mutex::new(None),
        quitting: AtomicBool::new(false),
    });

    let app = tauri::Builder::default()
        .plugin(tauri_plugin_clipboard_manager::init())
        .plugin(tauri_plugin_dialog::init())
        // Desktop notifications for panes that want attention (DESIGN §13); its script makes
        // the page's `Notification` API show them through the desktop's notification server.
        .plugin(tauri_plugin_notification::init())
        // No injected link-click handler: the UI decides what goes to the system browser.
        .plugin(tauri_plugin_opener::Builder::new().open_js_links_on_click(false).build())
        .manage(shell.clone())
        .invoke_handler(tauri::generate_handler![startup_status])
        .setup(move |app| {
            start_sidecar(app.handle(), args.ssh.clone());
            watch_signals(app.handle());
            Ok(())
        })
        .on_window_event(|window, event| {
            if let WindowEvent::CloseRequested { api, .. } = event {
                api.prevent_close();
                let app = window.app_handle().clone();
                std::thread::spawn(move || quit(&app, true));
            }
        })
        .build(tauri::generate_context!())
        .expect("failed to build the Tauri application");

    app.run(move |_app, event| {
        if let RunEvent::Exit = event {
            // Covers every way out (quit flow, signals, last window gone).
            shell.shutdown_sidecar();
        }
    });
}

/// Sets environment variables that must be in place before GTK/WebKit start and
/// before any thread is spawned.
fn prepare_environment() {
    // WebKitGTK's DMA-BUF renderer shows a blank window under VMs, Xvfb and NVIDIA.
    #[cfg(target_os = "linux")]
    if std::env::var_os("WEBKIT_DISABLE_DMABUF_RENDERER").is_none() {
        std::env::set_var("WEBKIT_DISABLE_DMABUF_RENDERER", "1");
    }
    // Loopback requests (webview → sidecar, sidecar → dev servers) must bypass proxies.
    for var in ["no_proxy", "NO_PROXY"] {
        let current = std::env::var(var).unwrap_or_default();
        let mut entries: Vec<&str> = current.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        for host in ["127.0.0.1", "localhost"] {
            if !entries.contains(&host) {
                entries.push(host);
            }
        }
        std::env::set_var(var, entries.join(","));
    }
}

/// The directory holding the running executable (symlinks resolved).
fn exe_dir() -> PathBuf {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Spawns the sidecar on the calling (main) thread, then waits for its ready line
/// on a helper thread and navigates the main window to the login URL.
///
/// The spawn happens here and not on the helper thread because the sidecar's
/// parent-death signal (Linux) fires when the *spawning thread* exits.
fn start_sidecar(app: &AppHandle, ssh: Option<String>) {
    let shell = app.state::<Arc<Shell>>().inner().clone();
    let ui_override = std::env::var_os("PORTHOLE_UI_DIR").filter(|d| !d.is_empty()).map(PathBuf::from);
    let layout = layout::resolve(&exe_dir(), ui_override);

    let spawned = match layout.sidecar {
        Err(looked_at) => Err(StartError::NotFound(looked_at)),
        Ok(_) if !layout.ui.join("index.html").is_file() => Err(StartError::UiMissing(layout.ui.clone())),
        Ok(program) => Sidecar::spawn(&program, &layout.ui),
    };
    let sidecar = match spawned {
        Ok(sidecar) => Arc::new(sidecar),
        Err(err) => {
            fail(&shell, err, String::new());
            return;
        }
    };
    *shell.sidecar.lock().unwrap() = Some(sidecar.clone());

    // The bundled start page's URL (tauri://localhost/… on Linux), to come back to.
    let start_page = app.get_webview_window("main").and_then(|w| w.url().ok());
    let app = app.clone();
    std::thread::Builder::new()
        .name("sidecar-ready".into())
        .spawn(move || match sidecar.wait_ready(READY_TIMEOUT) {
            Ok(ready) => {
                eprintln!("porthole: sidecar ready at {}", ready.url);
                let navigated = grant_sidecar_origin(&app, &ready.url)
                    .and_then(|()| tauri::Url::parse(&ready.login_url).map_err(|e| e.to_string()))
                    .map(|mut url| {
                        // The UI opens "New remote workspace…" connecting to it (`?ssh=HOST`).
                        if let Some(h) = &ssh {
                            url.query_pairs_mut().append_pair("ssh", h);
                        }
                        url
                    })
                    .and_then(|url| match app.get_webview_window("main") {
                        Some(window) => window.navigate(url).map_err(|e| e.to_string()),
                        None => Err("the main window is gone".to_string()),
                    });
                match navigated {
                    Ok(()) => {
                        shell.set_status(Status::Ready);
                        watch_for_crash(&app, &shell, &sidecar, start_page);
                    }
                    Err(e) => fail(&shell, StartError::Navigate(e), sidecar.stderr_tail()),
                }
            }
            Err(err) => {
                let tail = sidecar.stderr_tail();
                shell.shutdown_sidecar();
                fail(&shell, err, tail);
            }
        })
        .expect("failed to spawn a thread");
}

/// Grants the UI served by the sidecar, and only that origin (not other loopback ports,
/// such as proxied dev servers), these plugin commands. The sidecar's port is only known now, so
/// this capability is added at runtime rather than in `capabilities/`.
///
/// - clipboard read/write text, because `navigator.clipboard` is unreliable in WebKitGTK;
/// - notifications (attention, DESIGN §13): WebKitGTK's own `Notification` API is refused
///   without a permission handler, so the notification plugin's stands in for it;
/// - the opener's `open_url` ("Open in system browser", issue #5), scoped by
///   [`opener_scope`] to http URLs on loopback and to the OS default program;
/// - the dialog's file picker, for a screencast page's `<input type=file>` (issue #11), and
///   the opener's "reveal in folder", for a screencast download's "Show in folder".
fn grant_sidecar_origin(app: &AppHandle, sidecar_url: &str) -> Result<(), String> {
    let capability = tauri::ipc::CapabilityBuilder::new("sidecar-ui")
        .remote(sidecar_url.to_string())
        .window("main")
        .permission("clipboard-manager:allow-read-text")
        .permission("clipboard-manager:allow-write-text")
        .permission("notification:default")
        .permission("dialog:allow-open")
        .permission("opener:allow-reveal-item-in-dir")
        .permission_scoped("opener:allow-open-url", opener_scope(), Vec::new());
    app.add_capability(capability).map_err(|e| e.to_string())
}

/// One allowed URL pattern of the opener plugin's scope (its `{"url": glob}` entry; no
/// `app` key, so only the OS default program may open it).
#[derive(Serialize)]
struct OpenerUrl {
    url: String,
}

/// The opener's allow list: `http://` on `127.0.0.1`, `localhost` or `[::1]`, an explicit
/// port of one to five digits, then a `/` and anything.
///
/// The plugin matches the whole URL string against `glob` patterns in which `*` also
/// matches `/` and `@`, so `http://127.0.0.1:*` would let `http://127.0.0.1:1@example.com/`
/// through (userinfo, then a foreign host). Spelling the port as digit classes followed by
/// `/` ends the authority before any free text; `[[]` and `[]]` are glob's literal
/// brackets (a bare `[::1]` is a character class).
fn opener_scope() -> Vec<OpenerUrl> {
    let mut allowed = Vec::new();
    for host in ["127.0.0.1", "localhost", "[[]::1[]]"] {
        for digits in 1..=5 {
            allowed.push(OpenerUrl { url: format!("http://{host}:{}/*", "[0-9]".repeat(digits)) });
        }
    }
    allowed
}

/// Blocks until the sidecar exits or the app starts quitting. A sidecar that exits on
/// its own (a crash, a kill) is reaped and the window goes back to the bundled page,
/// which then says so, instead of leaving a UI that can no longer reach its server.
fn watch_for_crash(app: &AppHandle, shell: &Shell, sidecar: &Arc<Sidecar>, start_page: Option<tauri::Url>) {
    loop {
        std::thread::sleep(Duration::from_millis(250));
        // Shutdown takes the sidecar out of the shell before stopping it, so an exit
        // seen while it is still in place was not asked for.
        let ours = matches!(shell.sidecar(), Some(s) if Arc::ptr_eq(&s, sidecar));
        if !ours || shell.quitting.load(Ordering::SeqCst) {
            return;
        }
        let Some(status) = sidecar.exit_status() else {
            continue;
        };
        if shell.quitting.load(Ordering::SeqCst) {
            return;
        }
        let tail = sidecar.stderr_tail();
        shell.shutdown_sidecar();
        fail(shell, StartError::Crashed(status), tail);
        if let (Some(window), Some(url)) = (app.get_webview_window("main"), start_page) {
            if let Err(e) = window.navigate(url) {
                eprintln!("porthole: failed to show the start page again: {e}");
            }
        }
        return;
    }
}

fn fail(shell: &Shell, err: StartError, stderr_tail: String) {
    eprintln!("porthole: {err}");
    shell.set_status(Status::Failed { reason: err.to_string(), hint: err.hint(), stderr_tail });
}

/// The quit flow, run off the main thread. With `ask`, asks the user first when a
/// terminal is busy (a program other than its idle shell runs in it).
fn quit(app: &AppHandle, ask: bool) {
    let shell = app.state::<Arc<Shell>>().inner().clone();
    if shell.quitting.swap(true, Ordering::SeqCst) {
        return;
    }
    if ask {
        if let Some(busy) = shell.sidecar().and_then(|s| s.busy_terminals()) {
            if !busy.is_empty() && !confirm_quit(app, &busy) {
                shell.quitting.store(false, Ordering::SeqCst);
                return;
            }
        }
    }
    shell.shutdown_sidecar();
    app.exit(0);
}

/// Returns true if and only if the user agreed to quit. Blocks; never call it on
/// the main thread.
fn confirm_quit(app: &AppHandle, busy: &[String]) -> bool {
    let what = if busy.len() == 1 {
        format!("A terminal is still running {}.\nQuitting Porthole stops it.", busy[0])
    } else {
        format!(
            "{} terminals are still running programs ({}).\nQuitting Porthole stops them.",
            busy.len(),
            busy.join(", ")
        )
    };
    let mut dialog = app
        .dialog()
        .message(what)
        .title("Quit Porthole?")
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom("Quit".into(), "Cancel".into()));
    if let Some(window) = app.get_webview_window("main") {
        dialog = dialog.parent(&window);
    }
    dialog.blocking_show()
}

/// SIGTERM, SIGINT and SIGHUP shut the sidecar down and quit, without asking.
fn watch_signals(app: &AppHandle) {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = match signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) {
            Ok(signals) => signals,
            Err(e) => {
                eprintln!("porthole: failed to install signal handlers: {e}");
                return;
            }
        };
        let app = app.clone();
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    eprintln!("porthole: got signal {signal}, shutting down");
                    quit(&app, false);
                    // A quit already in progress (a dialog open) must not block a signal.
                    let shell = app.state::<Arc<Shell>>().inner().clone();
                    shell.shutdown_sidecar();
                    app.exit(0);
                }
            })
            .expect("failed to spawn a thread");
    }
    #[cfg(not(unix))]
    let _ = app;
}

#[cfg(test)]
mod tests {
    use super::opener_scope;

    /// Whether the opener plugin would open `url`: it matches each allowed entry as a
    /// `glob::Pattern` against the whole URL with default options (tauri-plugin-opener
    /// 2.x, `scope.rs`).
    fn allowed(url: &str) -> bool {
        opener_scope().iter().any(|e| glob::Pattern::new(&e.url).unwrap().matches(url))
    }

    #[test]
    fn opener_scope_admits_http_on_loopback_with_a_port() {
        for url in [
            "http://127.0.0.1:8000/",
            "http://localhost:5173/",
            "http://localhost:5173/a/b?c=d@e#f",
            "http://[::1]:3000/",
            "http://127.0.0.1:1/",
            "http://localhost:65535/",
        ] {
            assert!(allowed(url), "{url} should be allowed");
        }
    }

    #[test]
    fn opener_scope_refuses_other_hosts_schemes_and_userinfo() {
        for url in [
            "http://example.com/",
            "https://localhost:5173/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "http://127.0.0.1:1@example.com/",
            "http://localhost:80@example.com/",
            "http://[::1]:80@example.com/",
            "http://127.0.0.1.example.com:80/",
            "http://localhost.example.com:80/",
            "http://127.0.0.1/",
            "http://127.0.0.1:8000",
            "http://127.0.0.1:123456/",
            "http://127.0.0.2:8000/",
            "http://[::2]:8000/",
            "http://:1/",
        ] {
            assert!(!allowed(url), "{url} should be refused");
        }
    }
}
