//! The Debian package (DESIGN §15): `cargo xtask dist` and the packaging suite of
//! `cargo xtask test`.
//!
//! What the package installs (`src-tauri/src/layout.rs` is the app's side of it):
//!
//! ```text
//! /usr/bin/porthole                                  the desktop app (Tauri's main binary)
//! /usr/lib/porthole/porthole-sidecar, ph             private: the sidecar puts this directory,
//!                                                    not /usr/bin, first on its panes' PATH
//! /usr/lib/porthole/ui/                              the built UI (ui/dist)
//! /usr/share/applications/Porthole.desktop           from src-tauri/packaging/porthole.desktop
//! /usr/share/icons/hicolor/NxN/apps/porthole.png     assets/icon.png at every ICON_SIZES
//! ```
//!
//! The package is made by Tauri's bundler (`cargo tauri bundle --bundles deb`, tauri-cli in
//! target/tools) from the static settings in `src-tauri/packaging/deb.json` plus the paths
//! computed here. The bundler rewrites the binary it packages in place (it patches, then
//! "restores" it), and the binaries under target/ may be hard links shared with other
//! checkouts, so it only ever sees copies: a staging directory posing as a cargo target dir.
//! The copies are stripped of debug info (a smaller package, and far less to gzip).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{cargo, run, run_explained, Failed};
use crate::{deps, SuiteResult};

/// Which cargo profile's binaries go into the package.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `target/debug`, for the packaging suite (no second build).
    Debug,
    /// `target/release`, for `cargo xtask dist`.
    Release,
}

impl Profile {
    fn dir(self) -> &'static str {
        match self {
            Profile::Debug => "debug",
            Profile::Release => "release",
        }
    }
}

/// Icon sizes (pixels, square) installed under `/usr/share/icons/hicolor`: the sizes the
/// freedesktop icon theme spec's hicolor theme defines for apps, up to the source's 512.
const ICON_SIZES: [u32; 10] = [16, 22, 24, 32, 48, 64, 96, 128, 256, 512];

/// The private directory of the installed layout (DESIGN §15, `layout.rs`).
const LIB_DIR: &str = "/usr/lib/porthole";

/// Where the bundler writes the desktop entry: `usr/share/applications/<productName>.desktop`.
const DESKTOP_ENTRY: &str = "usr/share/applications/Porthole.desktop";

/// The executables the package ships, and where.
const BINARIES: [(&str, &str); 3] = [("porthole", "/usr/bin"), ("porthole-sidecar", LIB_DIR), ("ph", LIB_DIR)];

/// Builds the `.deb` from the already built binaries of `profile` and `ui/dist`; returns
/// its path (in the staging directory, `<target>/deb-stage/<profile>/`).
pub fn bundle(root: &Path, profile: Profile) -> Result<PathBuf, Failed> {
    let target = target_dir(root)?;
    let built = target.join(profile.dir());
    let ui = root.join("ui/dist");
    for (name, _) in BINARIES {
        if !built.join(name).is_file() {
            return Err(Failed(format!("{} is not built", built.join(name).display())));
        }
    }
    if !ui.join("index.html").is_file() {
        return Err(Failed(format!("the UI is not built ({} has no index.html)", ui.display())));
    }

    let stage = target.join("deb-stage").join(profile.dir());
    if stage.exists() {
        std::fs::remove_dir_all(&stage).map_err(|e| Failed(format!("cannot clear {}: {e}", stage.display())))?;
    }
    // `stage` is the bundler's CARGO_TARGET_DIR: it takes the main binary from
    // `stage/<profile>/porthole` and writes `stage/<profile>/bundle/deb/`.
    let fake_out = stage.join(profile.dir());
    let files = stage.join("files");
    for dir in [&fake_out, &files] {
        std::fs::create_dir_all(dir).map_err(|e| Failed(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut file_map: Vec<(String, PathBuf)> = Vec::new();
    for (name, dest) in BINARIES {
        let staged = if name == "porthole" { fake_out.join(name) } else { files.join(name) };
        run(Command::new("strip").arg("--strip-debug").arg("-o").arg(&staged).arg(built.join(name)))?;
        if name != "porthole" {
            file_map.push((format!("{dest}/{name}"), staged));
        }
    }
    file_map.push((format!("{LIB_DIR}/ui"), ui));

    let icons = stage.join("icons");
    let sizes: Vec<String> = ICON_SIZES.iter().map(u32::to_string).collect();
    run(Command::new(deps::tauri_cli_path(root))
        .arg("icon")
        .arg(root.join("assets/icon.png"))
        .arg("--png")
        .arg(sizes.join(","))
        .arg("--output")
        .arg(&icons)
        .current_dir(root.join("src-tauri")))?;
    let icon_paths: Vec<PathBuf> = ICON_SIZES.iter().map(|s| icons.join(format!("{s}x{s}.png"))).collect();

    let mut cmd = Command::new(deps::tauri_cli_path(root));
    cmd.args(["bundle", "--bundles", "deb", "--ci", "--no-sign", "--no-binary-patching"]);
    if profile == Profile::Debug {
        cmd.arg("--debug");
    }
    cmd.arg("--config")
        .arg(root.join("src-tauri/packaging/deb.json"))
        .arg("--config")
        .arg(computed_config(&icon_paths, &file_map))
        .env("CARGO_TARGET_DIR", &stage)
        .current_dir(root.join("src-tauri"));
    run(&mut cmd)?;

    let out = fake_out.join("bundle/deb");
    let debs: Vec<PathBuf> = std::fs::read_dir(&out)
        .map_err(|e| Failed(format!("the bundler wrote no {}: {e}", out.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    match debs.as_slice() {
        [deb] => Ok(deb.clone()),
        _ => Err(Failed(format!("expected one .deb in {}, found {}", out.display(), debs.len()))),
    }
}

/// The bundler settings only known at build time, as a JSON merge patch over
/// `packaging/deb.json`: the icons and the files copied into the package.
fn computed_config(icons: &[PathBuf], files: &[(String, PathBuf)]) -> String {
    let icons: Vec<String> = icons.iter().map(|p| json_string(&p.to_string_lossy())).collect();
    let files: Vec<String> = files
        .iter()
        .map(|(dest, src)| format!("{}:{}", json_string(dest), json_string(&src.to_string_lossy())))
        .collect();
    format!(r#"{{"bundle":{{"icon":[{}],"linux":{{"deb":{{"files":{{{}}}}}}}}}}}"#, icons.join(","), files.join(","))
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Cargo's target directory (honours `CARGO_TARGET_DIR` and config), from `cargo metadata`.
fn target_dir(root: &Path) -> Result<PathBuf, Failed> {
    let out = cargo(root)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .map_err(|e| Failed(format!("cannot run cargo metadata: {e}")))?;
    let json = String::from_utf8_lossy(&out.stdout);
    crate::util::json_string_field(&json, "target_directory")
        .map(PathBuf::from)
        .ok_or_else(|| Failed("cargo metadata named no target_directory".into()))
}

/// One control field of a package (`dpkg-deb --field`).
pub fn control_field(deb: &Path, field: &str) -> Result<String, Failed> {
    let out = Command::new("dpkg-deb")
        .arg("--field")
        .arg(deb)
        .arg(field)
        .output()
        .map_err(|e| Failed(format!("cannot run dpkg-deb: {e}")))?;
    if !out.status.success() {
        return Err(Failed(format!(
            "dpkg-deb --field {} {field}: {}",
            deb.display(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `cargo xtask dist`'s last step: moves the staged package to
/// `<target>/dist/<package>_<version>_<arch>.deb` (Debian's file name), removes the
/// staging directory, and returns the new path.
pub fn publish(root: &Path, staged: &Path) -> Result<PathBuf, Failed> {
    let name = format!(
        "{}_{}_{}.deb",
        control_field(staged, "Package")?,
        control_field(staged, "Version")?,
        control_field(staged, "Architecture")?
    );
    let dist = target_dir(root)?.join("dist");
    std::fs::create_dir_all(&dist).map_err(|e| Failed(format!("cannot create {}: {e}", dist.display())))?;
    let dest = dist.join(name);
    std::fs::rename(staged, &dest)
        .or_else(|_| std::fs::copy(staged, &dest).map(|_| ()))
        .map_err(|e| Failed(format!("cannot move the package to {}: {e}", dest.display())))?;
    remove_stage(staged);
    Ok(dest)
}

/// Removes the staging directory a staged package lives in (`<target>/deb-stage/<profile>`).
fn remove_stage(staged: &Path) {
    // <stage>/<profile>/bundle/deb/<file>.deb
    if let Some(stage) = staged.ancestors().nth(4).filter(|p| p.parent().is_some_and(|d| d.ends_with("deb-stage"))) {
        let _ = std::fs::remove_dir_all(stage);
    }
}

/// A directory removed (with everything in it) when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The packaging suite: bundles the debug build, unpacks the package into a temporary
/// root, checks its control fields, layout and desktop entry (`desktop-file-validate`),
/// runs the desktop smoke against the unpacked `porthole`, and checks that the app wrote
/// nothing into its own install tree.
pub fn check(root: &Path) -> SuiteResult {
    let plain = |r: Result<(), Failed>| r.map_err(|f| (f, Vec::new()));
    let deb = bundle(root, Profile::Debug).map_err(|f| (f, Vec::new()))?;
    let unpacked = TempDir(std::env::temp_dir().join(format!("porthole-deb-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&unpacked.0);
    let dir = &unpacked.0;
    let result = (|| {
        plain(run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(dir)))?;
        plain(check_control(&deb))?;
        plain(check_layout(dir))?;
        plain(run(Command::new("desktop-file-validate").arg(dir.join(DESKTOP_ENTRY))))?;
        println!("package {} ({} bytes) unpacked into {}", deb.display(), file_size(&deb), dir.display());

        let before = tree(dir);
        run_explained(
            Command::new("node")
                .arg(root.join("tests/desktop/smoke.mjs"))
                .env("PORTHOLE_SMOKE_APP", dir.join("usr/bin/porthole"))
                .env("PORTHOLE_SMOKE_PH", dir.join("usr/lib/porthole/ph"))
                .env("PORTHOLE_SMOKE_DESKTOP_ENTRY", dir.join(DESKTOP_ENTRY))
                .env("PORTHOLE_TAURI_DRIVER", deps::tauri_driver_path(root))
                .current_dir(root),
            crate::WHY_LINES,
        )?;
        let after = tree(dir);
        if before != after {
            let added: Vec<&String> = after.iter().filter(|e| !before.contains(e)).take(5).collect();
            return plain(Err(Failed(format!("the app changed its install tree: {added:?}"))));
        }
        Ok(())
    })();
    remove_stage(&deb);
    result
}

/// The control fields the package must carry (DESIGN §15).
fn check_control(deb: &Path) -> Result<(), Failed> {
    let depends = control_field(deb, "Depends")?;
    let recommends = control_field(deb, "Recommends")?;
    let has = |list: &str, pkg: &str| list.split(',').any(|d| d.split_whitespace().next() == Some(pkg));
    if !has(&depends, "libwebkit2gtk-4.1-0") || !has(&depends, "libgtk-3-0") {
        return Err(Failed(format!("Depends lacks libwebkit2gtk-4.1-0 or libgtk-3-0: {depends:?}")));
    }
    if !has(&recommends, "chromium") {
        return Err(Failed(format!("Recommends lacks chromium: {recommends:?}")));
    }
    Ok(())
}

/// The files the installed layout needs, at the places `layout.rs` looks.
fn check_layout(dir: &Path) -> Result<(), Failed> {
    use std::os::unix::fs::PermissionsExt;
    for (name, dest) in BINARIES {
        let path = dir.join(dest.trim_start_matches('/')).join(name);
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode()).unwrap_or(0);
        if mode & 0o111 == 0 {
            return Err(Failed(format!("{} is missing or not executable", path.display())));
        }
    }
    let mut wanted = vec![dir.join("usr/lib/porthole/ui/index.html"), dir.join(DESKTOP_ENTRY)];
    wanted.extend(ICON_SIZES.iter().map(|s| dir.join(format!("usr/share/icons/hicolor/{s}x{s}/apps/porthole.png"))));
    match wanted.iter().find(|p| !p.is_file()) {
        Some(missing) => Err(Failed(format!("the package has no {}", missing.display()))),
        None => Ok(()),
    }
}

/// Every path under `dir` with its size, sorted: what the app must not change.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => {
                    out.push(format!("{}/", path.display()));
                    walk(&path, out);
                }
                _ => out.push(format!("{} {}", path.display(), entry.metadata().map(|m| m.len()).unwrap_or(0))),
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// A file's size in bytes (0 when unreadable).
pub fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computed_config_is_a_json_merge_patch_with_escaped_paths() {
        let config = computed_config(
            &[PathBuf::from("/t/icons/16x16.png")],
            &[("/usr/lib/porthole/ph".into(), PathBuf::from("/t/a \"b\"\\c"))],
        );
        assert_eq!(
            config,
            r#"{"bundle":{"icon":["/t/icons/16x16.png"],"linux":{"deb":{"files":{"/usr/lib/porthole/ph":"/t/a \"b\"\\c"}}}}}"#
        );
    }
}
