//! Where the app finds `porthole-sidecar` and the built UI, relative to its own executable.
//!
//! Two layouts are supported:
//! - **beside**: `porthole-sidecar` in the app's own directory. A dev checkout
//!   (`target/<profile>/`, UI in `<repo>/ui/dist`) or a portable folder (UI in `ui/`).
//! - **installed** (the Debian package, `cargo xtask dist`): the app is `/usr/bin/porthole`,
//!   and its private files sit in `/usr/lib/porthole/`: `porthole-sidecar`, `ph` (so the
//!   sidecar puts only that directory first on its panes' `PATH`, never all of `/usr/bin`)
//!   and the UI in `ui/`. The path is relative (`../lib/porthole`), so an unpacked package
//!   (`dpkg-deb -x pkg.deb ROOT`, then `ROOT/usr/bin/porthole`) works too.

use std::path::{Path, PathBuf};

/// The sidecar executable's file name.
fn sidecar_name() -> String {
    format!("porthole-sidecar{}", std::env::consts::EXE_SUFFIX)
}

/// The installed layout's private directory, relative to the directory holding `porthole`.
pub const INSTALLED_LIB_DIR: &str = "../lib/porthole";

/// What the app starts: the sidecar (or every place it looked for one) and the UI directory.
#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    /// The sidecar executable, or, when none was found, the paths looked at (in order).
    pub sidecar: Result<PathBuf, Vec<PathBuf>>,
    /// The UI directory to hand the sidecar; it may lack `index.html` (the caller checks).
    pub ui: PathBuf,
}

/// Resolves the layout for an app whose executable lives in `exe_dir`. `ui_override` is
/// `$PORTHOLE_UI_DIR` when set and non-empty.
///
/// Sidecar: `exe_dir/porthole-sidecar`, else `exe_dir/../lib/porthole/porthole-sidecar`.
/// UI: `ui_override`, else `ui/` in the sidecar's directory if it holds `index.html`, else
/// `exe_dir/../../ui/dist` (a dev checkout, where the app is `target/<profile>/porthole`).
pub fn resolve(exe_dir: &Path, ui_override: Option<PathBuf>) -> Layout {
    let candidates = [exe_dir.to_path_buf(), exe_dir.join(INSTALLED_LIB_DIR)];
    let name = sidecar_name();
    let found = candidates.iter().find(|dir| dir.join(&name).is_file());
    let sidecar = match found {
        Some(dir) => Ok(dir.join(&name)),
        None => Err(candidates.iter().map(|dir| dir.join(&name)).collect()),
    };
    let ui = ui_override.unwrap_or_else(|| {
        let packaged = found.map(|dir| dir.join("ui")).filter(|ui| ui.join("index.html").is_file());
        packaged.unwrap_or_else(|| exe_dir.join("../../ui/dist"))
    });
    Layout { sidecar, ui }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh empty directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!("porthole-layout-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    #[test]
    fn installed_layout_finds_the_sidecar_and_ui_in_lib() {
        let root = TempDir::new("installed");
        let bin = root.0.join("usr/bin");
        touch(&bin.join("porthole"));
        touch(&root.0.join("usr/lib/porthole").join(sidecar_name()));
        touch(&root.0.join("usr/lib/porthole/ui/index.html"));
        let layout = resolve(&bin, None);
        assert_eq!(layout.sidecar, Ok(bin.join(INSTALLED_LIB_DIR).join(sidecar_name())));
        assert_eq!(layout.ui, bin.join(INSTALLED_LIB_DIR).join("ui"));
    }

    #[test]
    fn a_sidecar_beside_the_app_wins_and_a_checkout_uses_ui_dist() {
        let root = TempDir::new("beside");
        let bin = root.0.join("target/debug");
        touch(&bin.join(sidecar_name()));
        // An installed copy elsewhere on the same tree must not be picked over the one beside.
        touch(&root.0.join("target/lib/porthole").join(sidecar_name()));
        let layout = resolve(&bin, None);
        assert_eq!(layout.sidecar, Ok(bin.join(sidecar_name())));
        assert_eq!(layout.ui, bin.join("../../ui/dist"));
    }

    #[test]
    fn the_ui_override_wins_over_both_layouts() {
        let root = TempDir::new("override");
        let bin = root.0.join("usr/bin");
        touch(&root.0.join("usr/lib/porthole").join(sidecar_name()));
        touch(&root.0.join("usr/lib/porthole/ui/index.html"));
        let layout = resolve(&bin, Some(PathBuf::from("/elsewhere/ui")));
        assert_eq!(layout.ui, PathBuf::from("/elsewhere/ui"));
    }

    #[test]
    fn no_sidecar_names_every_place_looked_at() {
        let root = TempDir::new("none");
        let bin = root.0.join("usr/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let layout = resolve(&bin, None);
        assert_eq!(
            layout.sidecar,
            Err(vec![bin.join(sidecar_name()), bin.join(INSTALLED_LIB_DIR).join(sidecar_name())])
        );
    }
}
