//! Finding and launching Chromium (DESIGN §4.2): discovery, flags, profile directories.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::Handler;

use super::BrowserError;

/// Names looked up on `PATH`, in this order, after `PORTHOLE_CHROME`.
const PATH_NAMES: [&str; 5] = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

/// Standard install locations, tried after `PATH`.
#[cfg(target_os = "macos")]
const STANDARD_PATHS: [&str; 2] = [
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
];
#[cfg(not(target_os = "macos"))]
const STANDARD_PATHS: [&str; 5] = [
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/snap/bin/chromium",
    "/opt/google/chrome/chrome",
];

/// Returns the Chromium executable to run: `$PORTHOLE_CHROME` (which must exist when set),
/// else the first of [`PATH_NAMES`] found on `PATH`, else the first existing standard path.
pub(crate) fn find_chromium() -> Result<PathBuf, BrowserError> {
    if let Some(p) = std::env::var_os("PORTHOLE_CHROME").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(BrowserError::NoChromium(format!("PORTHOLE_CHROME={} is not an executable file", p.display())))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in PATH_NAMES {
        for dir in std::env::split_paths(&path) {
            let cand = dir.join(name);
            if is_executable(&cand) {
                return Ok(cand);
            }
        }
    }
    for p in STANDARD_PATHS {
        if is_executable(Path::new(p)) {
            return Ok(PathBuf::from(p));
        }
    }
    Err(BrowserError::NoChromium(
        "no Chromium found: install Chromium (Debian/Ubuntu: `apt install chromium`) or Google \
         Chrome, or set PORTHOLE_CHROME to its executable"
            .into(),
    ))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// The root under which every browser's profile lives: `<data dir>/porthole/browsers`
/// (`$XDG_DATA_HOME/porthole` or `~/.local/share/porthole` on Linux).
pub(crate) fn profiles_root() -> PathBuf {
    match directories::ProjectDirs::from("", "", "porthole") {
        Some(d) => d.data_dir().join("browsers"),
        None => std::env::temp_dir().join("porthole-browsers"),
    }
}

/// Removes Chromium's `Singleton*` lock files from a profile whose previous process has
/// exited, so a relaunch on the same profile is not refused as "already running".
pub(crate) fn remove_stale_locks(profile: &Path) {
    for name in ["SingletonLock", "SingletonSocket", "SingletonCookie"] {
        let _ = std::fs::remove_file(profile.join(name));
    }
}

/// Flags (without dashes) of every launch, headless or headed (DESIGN §4.2, protocol §8).
/// `hide-crash-restore-bubble`: after a crash our relaunch restores the page itself; Chromium's
/// "Restore pages?" offer would bring back stale tabs. `disable-blink-features=AutomationControlled`:
/// remote debugging alone makes Chromium report `navigator.webdriver === true`, and pages
/// (sign-in forms, bot checks) treat such a browser differently from the user's own.
const OUR_FLAGS: [&str; 7] = [
    "no-first-run",
    "disable-blink-features=AutomationControlled",
    "hide-crash-restore-bubble",
    "no-default-browser-check",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
];

/// Flags (without dashes) of the headless (screencast) launch only, chosen instead of
/// chromiumoxide's automation defaults (protocol §8): the page must see an ordinary
/// Chromium (no `--enable-automation`; the user's locale, not `--lang=en_US`). `disable-popup-blocking`: the pane's tab strip is where a page's
/// popups go, and a pane has no "popup blocked" UI. `password-store=basic` and
/// `use-mock-keychain`: no keyring or keychain prompt for a browser without a window.
/// `force-color-profile=srgb`: frames are painted on an sRGB canvas. `blink-settings=…`: a
/// headless Chromium has no input devices, so `(hover: hover)` and `(pointer: fine)` were
/// false and styles under `@media (hover: hover)` (Tailwind v4's `hover:`) never showed; the
/// human drives the pane with a mouse (issue 22 item 6). See [`MOUSE_BLINK_SETTINGS`].
/// Site isolation stays on: a cross-origin iframe is an out-of-process frame of its own
/// target, as in the user's Chromium (agent browsing reaches it through that target,
/// `automation/frames.rs`).
const HEADLESS_FLAGS: [&str; 12] = [
    MOUSE_BLINK_SETTINGS,
    "disable-dev-shm-usage",
    "disable-popup-blocking",
    "password-store=basic",
    "use-mock-keychain",
    "force-color-profile=srgb",
    "disable-breakpad",
    "disable-client-side-phishing-detection",
    "disable-component-extensions-with-background-pages",
    "disable-default-apps",
    "disable-hang-monitor",
    "metrics-recording-only",
];

/// The input devices a headless page reports: one mouse (a fine pointer that hovers). Blink
/// parses each value as an integer bit set (`Settings::SetFromStrings`, its `FromString<T>`
/// is `ToInt`): pointer none = 1, coarse = 2, fine = 4; hover none = 1, hover = 2
/// (`blink::mojom::PointerType`, `HoverType`). A phone viewport turns on touch emulation
/// per tab, which makes Blink report a coarse pointer without hover until it is turned off.
const MOUSE_BLINK_SETTINGS: &str =
    "blink-settings=primaryPointerType=4,availablePointerTypes=4,primaryHoverType=2,availableHoverTypes=2";

/// The flags beside `--proxy-server` for a browser whose traffic goes through a proxy (a
/// remote's tunnel): loopback is not bypassed, and WebRTC uses no UDP the proxy does not
/// carry (it would reach this machine's network).
pub(crate) const PROXIED_FLAGS: [&str; 2] =
    ["proxy-bypass-list=<-loopback>", "force-webrtc-ip-handling-policy=disable_non_proxied_udp"];

/// Launches Chromium on `profile` with the flags of DESIGN §4.2, bounded by `bound`:
/// headless when `window` is `None`, else headed (a pop-out, DESIGN §4.4) with
/// `--window-size=W,H` (outer size in CSS px; the caller corrects it to the inner size).
/// Neither launch gets chromiumoxide's default (automation) flags: a page must not see
/// `navigator.webdriver`, and the user's window must not say "controlled by automated test
/// software" (protocol §8 lists both sets). The headless launch also gets the user agent of
/// the same Chromium with a window ([`user_agent`]), not `HeadlessChrome/…`.
/// `proxy`: a proxy server URL (`socks5://127.0.0.1:P`, a remote browser's tunnel, protocol
/// §8): all its traffic goes there, loopback included (`--proxy-bypass-list=<-loopback>`
/// takes away Chromium's implicit loopback bypass, so `localhost` is the proxy's side's), and
/// WebRTC sends no UDP around it.
/// The caller must poll the returned handler continuously in its own task.
///
/// Errors: `NoChromium`; `Launch` with one readable line (a headed launch that cannot reach
/// its display says so; Chromium's own output goes to the sidecar log, not to the user).
pub(crate) async fn launch(
    profile: &Path,
    bound: Duration,
    window: Option<(u32, u32)>,
    proxy: Option<&str>,
) -> Result<(Browser, Handler), BrowserError> {
    let exe = find_chromium()?;
    std::fs::create_dir_all(profile)
        .map_err(|e| BrowserError::Launch(format!("create_dir_all({}): {e}", profile.display())))?;
    remove_stale_locks(profile);
    // chromiumoxide 0.9: `.arg()` takes flags without dashes, `.viewport(None)` keeps it from
    // emulating 800×600, and `.new_headless_mode()` gives `--headless=new` plus
    // `--hide-scrollbars --mute-audio`. It always adds `--disable-extensions` (no extensions
    // given).
    let mut b = BrowserConfig::builder().chrome_executable(&exe).disable_default_args();
    // A normal browser window (no app or kiosk flags), so the user keeps DevTools and tabs.
    b = match window {
        None => {
            let b = b.new_headless_mode().args(HEADLESS_FLAGS);
            match user_agent(&exe).await {
                Some(ua) => b.arg(("user-agent", ua.as_str())),
                None => b,
            }
        }
        // `--disable-dev-shm-usage`: a small /dev/shm (containers) must not crash the window.
        // `--no-startup-window`: Chromium's own first tab (its new-tab page) could appear
        // after the launch is live, where it would pass for a tab the user opened and take
        // the active tab from ours; the window opens with our first page instead.
        Some((w, h)) => b.with_head().window_size(w, h).args(["disable-dev-shm-usage", "no-startup-window"]),
    };
    // Invalid messages come to our handler loop (with the raw text), which knows which ones
    // are expected: see [`invalid_message`].
    let mut b = b
        .surface_invalid_messages()
        .viewport(None)
        .user_data_dir(profile)
        .launch_timeout(bound)
        .request_timeout(Duration::from_millis(super::CDP_CALL_BOUND_MS))
        .args(OUR_FLAGS)
        .arg(("remote-debugging-port", "0"));
    if let Some(p) = proxy {
        b = b.arg(("proxy-server", p)).args(PROXIED_FLAGS);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        b = b.no_sandbox();
    }
    let config = b.build().map_err(BrowserError::Launch)?;
    let err = match tokio::time::timeout(bound, Browser::launch(config)).await {
        Ok(Ok(pair)) => return Ok(pair),
        Ok(Err(e)) => format!("failed to launch {}: {e}", exe.display()),
        Err(_) => format!("{} did not start within {bound:?}", exe.display()),
    };
    if window.is_none() {
        return Err(BrowserError::Launch(err));
    }
    tracing::warn!("headed chromium did not start: {err}");
    Err(BrowserError::Launch(headed_failure(&super::display::name(), &err)))
}

/// CDP events chromiumoxide 0.9's generated types cannot parse from this Chromium, and why;
/// each is dropped (none is one we follow) and logged at debug, not warned about.
/// `Network.requestWillBeSentExtraInfo`: Chromium renamed `ClientSecurityState`'s
/// `privateNetworkRequestPolicy` to `localNetworkAccessRequestPolicy` (Local Network Access),
/// and the generated struct requires the old field; chromiumoxide enables the Network domain
/// on every page, so this came once per request: the "WS Invalid message" warning logged
/// every few seconds (issue 22 item 9).
const KNOWN_UNPARSABLE: [(&str, &str); 1] = [(
    "Network.requestWillBeSentExtraInfo",
    "ClientSecurityState.privateNetworkRequestPolicy became localNetworkAccessRequestPolicy",
)];

/// How the handler loop reports a CDP message chromiumoxide could not parse (`raw`, its
/// text): `Ok(why)` for an event in [`KNOWN_UNPARSABLE`] (log at debug), else `Err(method)`,
/// the message's `method` (or `"?"`, or `"response"` for one with an `id`) to warn about.
/// Only the method is logged: the raw message may carry headers and cookies.
pub(crate) fn invalid_message(raw: &str) -> Result<&'static str, String> {
    let v: serde_json::Value = serde_json::from_str(raw).unwrap_or_default();
    let method = match v.get("method").and_then(|m| m.as_str()) {
        Some(m) => m,
        None if v.get("id").is_some() => return Err("response".into()),
        None => return Err("?".into()),
    };
    KNOWN_UNPARSABLE.iter().find(|(m, _)| *m == method).map(|(_, why)| *why).ok_or_else(|| method.to_string())
}

/// The user agent Chromium at `exe` sends with a window (`Chrome/<major>.0.0.0`, the
/// reduced form Chromium itself sends), for its headless launch, which would otherwise say
/// `HeadlessChrome` and be treated as a bot by sites that look. Read from `exe --version`
/// (bounded to 5 s). `None`, logged, when that fails: the page then sees Chromium's own
/// headless agent, as before.
async fn user_agent(exe: &Path) -> Option<String> {
    let out = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::process::Command::new(exe).arg("--version").stdin(Stdio::null()).stderr(Stdio::null()).output(),
    )
    .await;
    let text = match out {
        Ok(Ok(o)) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        other => {
            tracing::warn!(
                "`{} --version` failed ({other:?}): the screencast keeps the headless user agent",
                exe.display()
            );
            return None;
        }
    };
    let Some(major) = major_version(&text) else {
        tracing::warn!(
            "no version in `{} --version` ({text:?}): the screencast keeps the headless user agent",
            exe.display()
        );
        return None;
    };
    Some(format!("Mozilla/5.0 ({PLATFORM}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36"))
}

/// The user agent of a phone preset (issue 22 item 6): Chromium's reduced Android agent
/// (chromium.org "User-Agent Reduction": fixed `Linux; Android 10; K`) at the major version of
/// `product` (`Browser.getVersion`'s, e.g. `HeadlessChrome/156.0.8078.108`); `None` when it
/// names no version.
pub(crate) fn mobile_user_agent(product: &str) -> Option<String> {
    let major = major_version(&product.replace('/', " "))?;
    Some(format!(
        "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Mobile Safari/537.36"
    ))
}

/// The platform part of Chromium's reduced user agent (fixed per OS since Chrome 110; see
/// chromium.org "User-Agent Reduction").
#[cfg(target_os = "macos")]
const PLATFORM: &str = "Macintosh; Intel Mac OS X 10_15_7";
#[cfg(target_os = "windows")]
const PLATFORM: &str = "Windows NT 10.0; Win64; x64";
#[cfg(not(any(target_os = "macos", target_os = "windows")))]
const PLATFORM: &str = "X11; Linux x86_64";

/// The major version in `--version` output such as `Chromium 156.0.8078.108 built on Debian`
/// or `Google Chrome 131.0.6778.85`: the first word shaped `N.N.N.N`.
fn major_version(text: &str) -> Option<u32> {
    text.split_whitespace().find_map(|w| {
        let parts: Vec<&str> = w.split('.').collect();
        if parts.len() == 4 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
            parts[0].parse().ok()
        } else {
            None
        }
    })
}

/// The one line a user reads when a headed launch failed with `err` on display `display`.
fn headed_failure(display: &str, err: &str) -> String {
    let e = err.to_ascii_lowercase();
    let why = if e.contains("display") || e.contains("x server") || e.contains("wayland") {
        "Chromium could not connect to it"
    } else if e.contains("did not start within") {
        "Chromium did not start in time (details in the sidecar log)"
    } else {
        "Chromium did not start (details in the sidecar log)"
    };
    format!("Couldn't open a window on display {display}: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_headed_launch_is_one_readable_line() {
        let raw = "failed to launch /usr/bin/chromium: Browser process exited with status ExitStatus(unix_wait_status(256)) before websocket URL could be resolved, stderr: BrowserStderr(\"[1:1:ERROR:ozone_platform_x11.cc(249)] Missing X server or $DISPLAY\\n[1:1:ERROR:env.cc(257)] The platform failed to initialize.  Exiting.\\n\")";
        assert_eq!(
            headed_failure(":99", raw),
            "Couldn't open a window on display :99: Chromium could not connect to it"
        );
        assert_eq!(
            headed_failure(":1", "failed to launch x: killed"),
            "Couldn't open a window on display :1: Chromium did not start (details in the sidecar log)"
        );
    }

    #[test]
    fn the_major_version_is_read_from_version_output() {
        assert_eq!(major_version("Chromium 156.0.8078.108 built on Debian GNU/Linux 12 (bookworm)\n"), Some(156));
        assert_eq!(major_version("Google Chrome 131.0.6778.85 \n"), Some(131));
        assert_eq!(major_version("Chromium 12.0 beta"), None);
        assert_eq!(major_version(""), None);
    }

    #[test]
    fn the_phone_agent_is_androids_at_the_same_major() {
        let ua = mobile_user_agent("HeadlessChrome/156.0.8078.108").unwrap();
        assert!(ua.contains("Android 10; K") && ua.contains("Chrome/156.0.0.0 Mobile Safari"), "{ua}");
        assert_eq!(mobile_user_agent("Chrome"), None);
    }

    #[test]
    fn only_known_unparsable_events_are_quiet() {
        let known = r#"{"method":"Network.requestWillBeSentExtraInfo","params":{"requestId":"1"}}"#;
        assert!(invalid_message(known).unwrap().contains("localNetworkAccessRequestPolicy"));
        assert_eq!(invalid_message(r#"{"method":"Page.somethingNew","params":{}}"#), Err("Page.somethingNew".into()));
        assert_eq!(invalid_message(r#"{"id":3,"result":{}}"#), Err("response".into()));
        assert_eq!(invalid_message("not json"), Err("?".into()));
    }

    #[test]
    fn stale_locks_are_removed() {
        let d = std::env::temp_dir().join(format!("porthole-locks-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("SingletonLock"), b"x").unwrap();
        std::fs::write(d.join("Cookies"), b"x").unwrap();
        remove_stale_locks(&d);
        assert!(!d.join("SingletonLock").exists());
        assert!(d.join("Cookies").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
