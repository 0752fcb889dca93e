//! `cargo xtask`: the one entry point for building, running, testing and benchmarking
//! Porthole. std only, so it compiles in seconds.
//!
//! ```text
//! cargo xtask run [--web]      build the UI, the sidecar and (unless --web) the desktop app, then run it
//! cargo xtask test             build once, run every suite, print "N passed, N failed"
//! cargo xtask bench [pty|proxy|ports|screencast|control|agent|terminal|remote] run a benchmark (release build)
//! cargo xtask dist             release build, then a Debian package (target/dist/*.deb)
//! ```

mod deps;
mod package;
mod signals;
mod util;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use util::{cargo, run, run_explained, Failed};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = repo_root();
    let result = match args.first().map(String::as_str) {
        Some("run") => cmd_run(&root, &args[1..]),
        Some("test") => cmd_test(&root, &args[1..]),
        Some("bench") => cmd_bench(&root, &args[1..]),
        Some("dist") => cmd_dist(&root, &args[1..]),
        Some("-h" | "--help" | "help") | None => {
            print!("{}", USAGE);
            Ok(())
        }
        Some(other) => Err(Failed(format!("unknown command {other:?}\n\n{USAGE}"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failed(msg)) => {
            // An empty message means the failure was already reported (test summary).
            if !msg.is_empty() {
                eprintln!("xtask: error: {msg}");
            }
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "\
usage: cargo xtask <command>

  run [--web]    build the UI, the sidecar and the desktop app, then start the app;
                 with --web (or on Linux without DISPLAY/WAYLAND_DISPLAY) start the
                 sidecar in web mode and print the URL to open instead
  test [SUITE]   build once, then run every suite (cargo tests, UI unit tests,
                 Playwright e2e, desktop smoke, packaging); prints `N passed, N failed`;
                 with SUITE (e.g. packaging), only that one
  dist           release build of the UI, the sidecar, ph and the desktop app, then a
                 Debian package with Tauri's bundler; prints its path and size
  bench [pty|proxy|ports|screencast|control|agent|terminal|remote]
                 run a benchmark in release mode (pty: sidecar PTY throughput;
                 proxy: 300-module page load direct vs through the iframe proxy;
                 ports: port scan latency with 50 busy terminals;
                 screencast: viewer fps vs bare CDP, input-to-frame latency;
                 control: ph list/read round trips, reading 10,000 lines;
                 agent: ph browser vs Playwright MCP on the fixture corpus,
                 a 5,000-element page and an 8-task suite (BENCH_AGENT_TASKS=only:
                 the suite alone, =0: without it); terminal: 20 MB floods until on screen in the
                 real UI (DOM and WebGL renderers) vs. the PTY alone, a second window
                 throttled, restore of a 33-pane wall; remote: a remote pane vs plain
                 ssh -tt to the test sshd: keystroke echo, a 20 MB flood, reconnect)

run, test and dist first install what is missing: Debian packages (apt-get, as root
or via sudo -n), npm packages (npm ci), for test tauri-driver, and for test and dist
tauri-cli (its bundler) into target/tools.
";

fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().expect("xtask lives in the repo root").to_path_buf()
}

/// True when there is no display to open a window on (Linux only).
fn headless() -> bool {
    cfg!(target_os = "linux")
        && !matches!(std::env::var_os("DISPLAY"), Some(d) if !d.is_empty())
        && !matches!(std::env::var_os("WAYLAND_DISPLAY"), Some(d) if !d.is_empty())
}

fn cmd_run(root: &Path, args: &[String]) -> Result<(), Failed> {
    let mut web = false;
    for arg in args {
        match arg.as_str() {
            "--web" => web = true,
            other => return Err(Failed(format!("run: unknown argument {other:?}"))),
        }
    }
    if !web && headless() {
        println!("xtask: no DISPLAY or WAYLAND_DISPLAY: starting web mode instead of the desktop app");
        web = true;
    }
    let needs = if web { deps::Needs::Web } else { deps::Needs::Desktop };
    deps::bootstrap(root, needs)?;
    run(Command::new("npm").args(["run", "build"]).current_dir(root.join("ui")))?;
    let mut build = cargo(root);
    build.args(["build", "-p", "sidecar"]);
    if !web {
        build.args(["-p", "porthole"]);
    }
    run(&mut build)?;

    signals::install();
    let bin = root.join("target/debug");
    if web {
        run_web(root, &bin.join(exe("porthole-sidecar")))
    } else {
        let mut app = Command::new(bin.join(exe("porthole")));
        app.stdin(Stdio::inherit());
        signals::run_forwarding(&mut app)
    }
}

/// Starts the sidecar in web mode, prints its login URL, and waits for it; Ctrl-C
/// (or SIGTERM to xtask) shuts it down.
fn run_web(root: &Path, sidecar: &Path) -> Result<(), Failed> {
    use std::io::BufRead;
    let mut cmd = Command::new(sidecar);
    cmd.arg("--web").arg("--ui-dir").arg(root.join("ui/dist")).stdin(Stdio::null()).stdout(Stdio::piped());
    signals::own_group(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| Failed(format!("failed to start {}: {e}", sidecar.display())))?;
    let stdout = child.stdout.take().expect("piped");
    let mut line = String::new();
    let mut reader = std::io::BufReader::new(stdout);
    if reader.read_line(&mut line).unwrap_or(0) > 0 {
        match util::json_string_field(&line, "login_url") {
            Some(url) => {
                println!();
                println!("  Porthole is running in web mode.");
                println!("  Open this URL: {url}");
                println!("  (one-time login link; press Ctrl-C to stop)");
                println!();
            }
            None => println!("xtask: the sidecar printed an unexpected ready line: {}", line.trim()),
        }
    }
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::stdout()));
    signals::wait_forwarding(child)
}

/// `cargo xtask dist`: a release build, then the Debian package (DESIGN §15).
fn cmd_dist(root: &Path, args: &[String]) -> Result<(), Failed> {
    if let Some(arg) = args.first() {
        return Err(Failed(format!("dist: unknown argument {arg:?}")));
    }
    if !cfg!(target_os = "linux") {
        return Err(Failed("dist builds a Debian package, on Linux only".into()));
    }
    deps::bootstrap(root, deps::Needs::Dist)?;
    run(Command::new("npm").args(["run", "build"]).current_dir(root.join("ui")))?;
    run(cargo(root).args(["build", "--release", "-p", "sidecar", "-p", "porthole"]))?;
    let staged = package::bundle(root, package::Profile::Release)?;
    let deb = package::publish(root, &staged)?;
    let bytes = package::file_size(&deb);
    println!();
    println!("  package: {}", deb.display());
    println!("  size:    {bytes} bytes ({:.1} MiB)", bytes as f64 / (1024.0 * 1024.0));
    println!("  installed size: {} KiB", package::control_field(&deb, "Installed-Size")?);
    println!("  install: sudo apt install {}", deb.display());
    println!();
    Ok(())
}

/// The benchmarks `cargo xtask bench NAME` knows; each runs the sidecar example `bench_NAME`.
const BENCHES: [&str; 8] = ["pty", "proxy", "ports", "screencast", "control", "agent", "terminal", "remote"];

fn cmd_bench(root: &Path, args: &[String]) -> Result<(), Failed> {
    let which = args.first().map(String::as_str).unwrap_or("pty");
    if !BENCHES.contains(&which) {
        return Err(Failed(format!("bench: unknown benchmark {which:?} (available: {})", BENCHES.join(", "))));
    }
    let example = format!("bench_{which}");
    run(cargo(root).args(["run", "--release", "-p", "sidecar", "--example", &example]).args(&args[1.min(args.len())..]))
}

/// One suite's outcome, for the summary.
struct Outcome {
    name: &'static str,
    ok: bool,
    secs: u64,
    /// What the suite's output said failed (empty when it passed or said nothing useful).
    why: Vec<String>,
}

/// At most this many lines explain each failed suite in the summary.
const WHY_LINES: usize = 12;

/// A suite's result: on failure, the error and the output lines that explain it.
type SuiteResult = Result<(), (Failed, Vec<String>)>;

fn plain(result: Result<(), Failed>) -> SuiteResult {
    result.map_err(|f| (f, Vec::new()))
}

/// The suites `cargo xtask test [SUITE]` runs, in order.
const SUITES: [&str; 6] =
    ["rustfmt", "cargo test", "ui unit (vitest)", "e2e (playwright)", "desktop smoke", "packaging"];

fn cmd_test(root: &Path, args: &[String]) -> Result<(), Failed> {
    // One optional argument: the only suite to run (after the build).
    let only: Option<&str> = match args {
        [] => None,
        [suite] if SUITES.contains(&suite.as_str()) => Some(suite.as_str()),
        _ => return Err(Failed(format!("test: unknown arguments {args:?} (suites: {})", SUITES.join(", ")))),
    };
    let started = Instant::now();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut step = |name: &'static str, f: &mut dyn FnMut() -> SuiteResult| {
        if name != "build" && only.is_some_and(|o| o != name) {
            return true;
        }
        banner(name);
        let t = Instant::now();
        let result = f();
        let ok = result.is_ok();
        let why = match result {
            Ok(()) => Vec::new(),
            Err((Failed(msg), why)) => {
                eprintln!("xtask: {name} failed: {msg}");
                why
            }
        };
        outcomes.push(Outcome { name, ok, secs: t.elapsed().as_secs(), why });
        ok
    };

    // Build once; every suite below uses these artifacts. A failed part does not stop
    // the others, so one broken build still lets the unrelated suites run.
    let built = step("build", &mut || {
        plain(deps::bootstrap(root, deps::Needs::Test))?;
        let mut parts = vec![
            run(Command::new("npm").args(["run", "build"]).current_dir(root.join("ui"))),
            run(cargo(root).args(["build", "-p", "sidecar", "-p", "porthole"])),
        ];
        if only.map_or(true, |o| o == "cargo test") {
            parts.push(run(cargo(root).args(["test", "--workspace", "--no-run"])));
        }
        let failed: Vec<String> = parts.into_iter().filter_map(|r| r.err()).map(|Failed(m)| m).collect();
        if failed.is_empty() {
            Ok(())
        } else {
            Err((Failed(failed.join("; ")), Vec::new()))
        }
    });
    step("rustfmt", &mut || {
        if !util::succeeds(cargo(root).args(["fmt", "--version"])) {
            return plain(Err(Failed("rustfmt is not installed: run `rustup component add rustfmt`".into())));
        }
        run_explained(cargo(root).args(["fmt", "--all", "--check"]), WHY_LINES)
    });
    step("cargo test", &mut || run_explained(cargo(root).args(["test", "--workspace"]), WHY_LINES));
    step("ui unit (vitest)", &mut || {
        run_explained(Command::new("npm").arg("test").current_dir(root.join("ui")), WHY_LINES)
    });
    step("e2e (playwright)", &mut || {
        run_explained(Command::new("npm").arg("test").current_dir(root.join("tests/e2e")), WHY_LINES)
    });
    step("desktop smoke", &mut || {
        run_explained(
            Command::new("node")
                .arg(root.join("tests/desktop/smoke.mjs"))
                .env("PORTHOLE_TAURI_DRIVER", deps::tauri_driver_path(root))
                .current_dir(root),
            WHY_LINES,
        )
    });
    step("packaging", &mut || package::check(root));

    println!();
    println!("==== summary ({} s) ====", started.elapsed().as_secs());
    for o in &outcomes {
        println!("{} {:<20} {:>5} s", if o.ok { "PASS" } else { "FAIL" }, o.name, o.secs);
    }
    // Last, right above the count, so the tail of a long CI log says what failed.
    for o in outcomes.iter().filter(|o| !o.why.is_empty()) {
        println!("-- {} failed on:", o.name);
        for line in &o.why {
            println!("   {line}");
        }
    }
    if !built {
        println!("(the build failed, so later failures may only follow from it)");
    }
    // The build is a step, not a suite, unless it failed.
    let suites: Vec<&Outcome> = outcomes.iter().filter(|o| o.name != "build" || !o.ok).collect();
    let passed = suites.iter().filter(|o| o.ok).count();
    let failed = suites.len() - passed;
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        Err(Failed(String::new()))
    } else {
        Ok(())
    }
}

fn banner(name: &str) {
    println!();
    println!("==== {name} ====");
}

fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}
