//! Dependency bootstrap shared by `run`, `test` and `dist`: Debian packages, npm packages,
//! and (for `test` and `dist`) tauri-driver and tauri-cli in a project-local root.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use crate::util::{cargo, run, succeeds, Failed};

/// What the command about to run needs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// `run --web`: the sidecar and the UI build only.
    Web,
    /// `run`: also the Tauri shell (WebKitGTK headers).
    Desktop,
    /// `test`: everything, plus the browsers, X server and drivers the suites use.
    Test,
    /// `dist`: what `run` needs, plus Tauri's bundler (tauri-cli).
    Dist,
}

/// Debian packages per need. Build: a C toolchain and pkg-config for the -sys
/// crates; WebKitGTK 4.1 (pulls GTK 3, libsoup 3) for the Tauri shell. Runtime:
/// Chromium (browser panes, Playwright); for the desktop smoke Xvfb, dbus-run-session,
/// WebKitWebDriver, and python3 (tests/desktop/x11.py); x11-utils (`xwininfo`) for the
/// pop-out test's window check (sidecar/tests/popout.rs); vim and htop, the real programs
/// the README's screenshot shows (tests/e2e/specs/screenshot.spec.ts); iproute2 and
/// util-linux (`ip`, `unshare`) for the proxy tests that run in a private network namespace
/// (sidecar/tests/proxy.rs); zsh and fish for the shell-integration tests
/// (sidecar/tests/shell.rs); tmux for `ph` inside tmux inside a pane
/// (sidecar/tests/control.rs); desktop-file-utils (`desktop-file-validate`) for the packaging
/// suite; openssh-server, openssh-client and socat for the remote-workspace tests, whose
/// test remote is a real `sshd` in a private network namespace (sidecar/tests/remote.rs).
/// `strip` (binutils) for the package comes with build-essential.
fn debian_packages(needs: Needs) -> Vec<&'static str> {
    let mut pkgs = vec!["build-essential", "pkg-config", "chromium"];
    if needs != Needs::Web {
        pkgs.push("libwebkit2gtk-4.1-dev");
    }
    if needs == Needs::Test {
        pkgs.extend([
            "xvfb",
            "x11-utils",
            "dbus-daemon",
            "webkit2gtk-driver",
            "python3",
            "vim",
            "htop",
            "iproute2",
            "util-linux",
            "zsh",
            "fish",
            "tmux",
            "desktop-file-utils",
            "openssh-server",
            "openssh-client",
            "socat",
        ]);
    }
    pkgs
}

/// tauri-driver's major version: it must match Tauri's.
const TAURI_DRIVER_VERSION: &str = "^2";

pub fn tauri_driver_path(root: &Path) -> PathBuf {
    root.join("target/tools/bin").join(format!("tauri-driver{}", std::env::consts::EXE_SUFFIX))
}

/// tauri-cli (`cargo tauri`, for its bundler), installed by [`bootstrap`] for `test` and `dist`.
pub fn tauri_cli_path(root: &Path) -> PathBuf {
    root.join("target/tools/bin").join(format!("cargo-tauri{}", std::env::consts::EXE_SUFFIX))
}

pub fn bootstrap(root: &Path, needs: Needs) -> Result<(), Failed> {
    if cfg!(target_os = "linux") && Path::new("/usr/bin/dpkg-query").exists() {
        apt_install(&debian_packages(needs))?;
    } else if cfg!(target_os = "linux") {
        println!(
            "xtask: not a Debian-family system: install WebKitGTK 4.1, Chromium, Xvfb and WebKitWebDriver yourself"
        );
    }
    check_node()?;
    npm_ci(&root.join("ui"))?;
    if needs == Needs::Test {
        npm_ci(&root.join("tests/e2e"))?;
        // React and esbuild for the agent tests' React fixture (sidecar/tests/agent.rs).
        npm_ci(&root.join("sidecar/tests/fixtures/agent/react"))?;
        install_tauri_driver(root)?;
    }
    if matches!(needs, Needs::Test | Needs::Dist) {
        install_tauri_cli(root)?;
    }
    Ok(())
}

fn missing_debian_packages(pkgs: &[&str]) -> Vec<String> {
    pkgs.iter()
        .filter(|p| {
            let out = Command::new("dpkg-query").args(["-W", "-f=${db:Status-Status}", p]).output();
            !matches!(out, Ok(o) if o.status.success() && o.stdout == b"installed")
        })
        .map(|p| p.to_string())
        .collect()
}

fn apt_install(pkgs: &[&str]) -> Result<(), Failed> {
    let missing = missing_debian_packages(pkgs);
    if missing.is_empty() {
        return Ok(());
    }
    println!("xtask: missing Debian packages: {}", missing.join(" "));
    let manual =
        format!("sudo apt-get update && sudo apt-get install -y --no-install-recommends {}", missing.join(" "));
    let is_root = Command::new("id").arg("-u").output().map(|o| o.stdout.trim_ascii() == b"0").unwrap_or(false);
    let sudo: &[&str] = if is_root {
        &[]
    } else if succeeds(Command::new("sudo").args(["-n", "true"])) {
        &["sudo", "-n"]
    } else {
        return Err(Failed(format!("cannot install packages without root; run:\n  {manual}")));
    };
    let apt = |args: &[&str]| -> Result<(), Failed> {
        let mut argv: Vec<&str> = sudo.to_vec();
        argv.push("apt-get");
        argv.extend(args);
        let mut cmd = Command::new(argv[0]);
        cmd.args(&argv[1..]).env("DEBIAN_FRONTEND", "noninteractive");
        run(&mut cmd)
    };
    apt(&["update"])?;
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(missing.iter().map(String::as_str));
    apt(&install).map_err(|Failed(msg)| Failed(format!("{msg}\nto retry by hand:\n  {manual}")))
}

fn check_node() -> Result<(), Failed> {
    let version = Command::new("node").arg("--version").output();
    let Ok(out) = version else {
        return Err(Failed("node (>= 20) and npm are required but node is not on PATH".into()));
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let major: u32 = text.trim().trim_start_matches('v').split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    if major < 20 {
        return Err(Failed(format!("node >= 20 is required, found {}", text.trim())));
    }
    Ok(())
}

/// `npm ci` in `dir` when `node_modules` is missing or older than the lockfile.
fn npm_ci(dir: &Path) -> Result<(), Failed> {
    let lock = dir.join("package-lock.json");
    if !lock.exists() {
        return Ok(());
    }
    // npm writes node_modules/.package-lock.json on every install.
    let installed = dir.join("node_modules/.package-lock.json");
    let fresh = match (mtime(&installed), mtime(&lock)) {
        (Some(installed), Some(lock)) => installed >= lock,
        _ => false,
    };
    if fresh {
        return Ok(());
    }
    run(Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(dir))
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn install_tauri_driver(root: &Path) -> Result<(), Failed> {
    if tauri_driver_path(root).exists() {
        return Ok(());
    }
    run(cargo(root)
        .args(["install", "tauri-driver", "--version", TAURI_DRIVER_VERSION, "--locked", "--root"])
        .arg(root.join("target/tools")))
}

/// The `major.minor` of the `tauri` crate in Cargo.lock: tauri-cli is released in step with
/// it, and its bundler must understand the app's tauri.conf.json.
fn locked_tauri_minor(root: &Path) -> Result<String, Failed> {
    let lock =
        std::fs::read_to_string(root.join("Cargo.lock")).map_err(|e| Failed(format!("cannot read Cargo.lock: {e}")))?;
    tauri_minor_in_lock(&lock).ok_or_else(|| Failed("Cargo.lock has no tauri package".into()))
}

fn tauri_minor_in_lock(lock: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == r#"name = "tauri""# {
            let version = lines.next()?.trim().strip_prefix("version = \"")?.strip_suffix('"')?;
            let mut parts = version.split('.');
            return Some(format!("{}.{}", parts.next()?, parts.next()?));
        }
    }
    None
}

/// Installs tauri-cli `~MAJOR.MINOR` of the locked tauri into target/tools, unless the one
/// there already is that version. Without default features: they only add TLS for the
/// bundle formats that download tools (AppImage, NSIS, WiX), which we do not build.
fn install_tauri_cli(root: &Path) -> Result<(), Failed> {
    let minor = locked_tauri_minor(root)?;
    let bin = tauri_cli_path(root);
    // "tauri-cli 2.12.4" → "2.12.4"
    let version = |program: &Path| {
        let out = Command::new(program).arg("--version").output().ok().filter(|o| o.status.success())?;
        Some(String::from_utf8_lossy(&out.stdout).split_whitespace().nth(1).unwrap_or("").to_string())
    };
    let matches = |v: &str| v.starts_with(&format!("{minor}."));
    if let Some(installed) = version(&bin) {
        if matches(&installed) {
            return Ok(());
        }
        println!("xtask: tauri-cli {installed} does not match tauri {minor}.x; reinstalling");
    }
    // A matching one the user already installed (`cargo install tauri-cli` puts it in
    // $CARGO_HOME/bin) is linked in rather than built again: building it takes long.
    if let Some(found) = which_on_path("cargo-tauri").filter(|p| version(p).is_some_and(|v| matches(&v))) {
        std::fs::create_dir_all(bin.parent().unwrap_or(root))
            .map_err(|e| Failed(format!("create {}: {e}", bin.display())))?;
        let _ = std::fs::remove_file(&bin);
        std::os::unix::fs::symlink(&found, &bin)
            .map_err(|e| Failed(format!("link {} to {}: {e}", bin.display(), found.display())))?;
        println!("xtask: using {} (tauri-cli {minor}.x)", found.display());
        return Ok(());
    }
    run(cargo(root)
        .args(["install", "tauri-cli", "--version", &format!("~{minor}"), "--locked", "--no-default-features"])
        .arg("--force")
        .arg("--root")
        .arg(root.join("target/tools")))
}

/// The first executable `name` in `$PATH`.
fn which_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::tauri_minor_in_lock;

    #[test]
    fn tauri_minor_is_read_from_the_lock_file_and_not_from_similar_names() {
        let lock = "[[package]]\nname = \"tauri-build\"\nversion = \"2.7.4\"\n\n\
                    [[package]]\nname = \"tauri\"\nversion = \"2.12.5\"\nsource = \"registry\"\n";
        assert_eq!(tauri_minor_in_lock(lock).as_deref(), Some("2.12"));
        assert_eq!(tauri_minor_in_lock("[[package]]\nname = \"tauri-utils\"\nversion = \"2.10.2\"\n"), None);
    }
}
