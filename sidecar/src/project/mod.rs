//! Project files (DESIGN §14, docs/config.md "Project file"): `.porthole.toml` in the nearest
//! ancestor of a pane's cwd, with viewport presets and named layouts, and whether the human
//! trusts it.
//!
//! **Architecture Invariant:** this module is the only reader of project files and (through
//! [`trust`]) of the trust store. It never starts anything: the API's `up` asks it for a
//! trusted layout's plan and starts the panes itself.

mod schema;
pub mod trust;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use schema::{
    BrowserMode, BrowserSpec, Command, Items, Layout, LayoutName, Layouts, PaneSpec, Port, ProjectFile, RelDir, Side,
    UrlPath, MAX_LAYOUTS, MAX_LAYOUT_ITEMS,
};
pub use trust::Trust;

use crate::config::ConfigError;

/// The project file's name.
pub const FILE_NAME: &str = ".porthole.toml";
/// Largest project file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Most directories walked up from a cwd looking for the file.
const MAX_ANCESTORS: usize = 128;
/// The layout started when none is named, if the file has one by this name (else the first).
pub const DEFAULT_LAYOUT: &str = "default";

/// Why a project's layout cannot be started.
#[derive(Debug, Clone, PartialEq)]
pub enum ProjectError {
    /// Occurs when no ancestor of the directory holds a project file. 404 `no_project`.
    NotFound(PathBuf),
    /// Occurs when the file cannot be read or does not parse; line and column when the
    /// parser gave a span. 400 `bad_project`.
    Invalid(ConfigError),
    /// Occurs when the file has no layout by that name (or none at all). 404 `unknown_layout`.
    UnknownLayout {
        /// The project file.
        file: PathBuf,
        /// The name asked for (`None`: the default).
        name: Option<String>,
        /// The layouts the file has.
        available: Vec<String>,
    },
    /// Occurs when the human has not trusted this version of the file. 409 `untrusted_project`;
    /// nothing was started and the window was asked to show the trust prompt.
    Untrusted {
        /// The project file.
        file: PathBuf,
        /// SHA-256 of its bytes.
        sha256: String,
        /// Whether a window was sent the trust prompt.
        asked: bool,
    },
    /// Occurs when the human trusts a version that is no longer the file's (it changed
    /// while the prompt was shown). 409 `project_changed`.
    Changed(PathBuf),
    /// Occurs when the trust store cannot be written. 500 `internal`.
    Store(String),
}

impl ProjectError {
    /// The HTTP status and the stable code.
    pub fn status_and_code(&self) -> (u16, &'static str) {
        match self {
            ProjectError::NotFound(_) => (404, "no_project"),
            ProjectError::Invalid(_) => (400, "bad_project"),
            ProjectError::UnknownLayout { .. } => (404, "unknown_layout"),
            ProjectError::Untrusted { .. } => (409, "untrusted_project"),
            ProjectError::Changed(_) => (409, "project_changed"),
            ProjectError::Store(_) => (500, "internal"),
        }
    }

    /// Fields the error body carries besides code and message.
    pub fn details(&self) -> Vec<(&'static str, serde_json::Value)> {
        use serde_json::json;
        match self {
            ProjectError::Invalid(e) => {
                vec![("file", json!(e.file)), ("line", json!(e.line)), ("column", json!(e.column))]
            }
            ProjectError::UnknownLayout { file, available, .. } => {
                vec![("file", json!(file)), ("candidates", json!(available))]
            }
            ProjectError::Untrusted { file, sha256, .. } => vec![("file", json!(file)), ("sha256", json!(sha256))],
            ProjectError::Changed(file) => vec![("file", json!(file))],
            _ => Vec::new(),
        }
    }
}

impl std::fmt::Display for ProjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProjectError::NotFound(d) => write!(f, "no {FILE_NAME} in {} or any directory above it", d.display()),
            ProjectError::Invalid(e) => write!(f, "{e}"),
            ProjectError::UnknownLayout { file, name: Some(n), available } => write!(
                f,
                "{} has no layout {n:?}; it has: {}",
                file.display(),
                if available.is_empty() { "none".to_string() } else { available.join(", ") }
            ),
            ProjectError::UnknownLayout { file, name: None, .. } => write!(f, "{} has no layouts", file.display()),
            ProjectError::Untrusted { file, asked, .. } => write!(
                f,
                "{} is not trusted yet (it can start commands); nothing was started. {}",
                file.display(),
                if *asked {
                    "Trust it in the Porthole window, which now asks, then run this again"
                } else {
                    "No Porthole window is open to ask; open it, then run this again"
                }
            ),
            ProjectError::Changed(file) => {
                write!(f, "{} changed since it was shown; look at it again before trusting it", file.display())
            }
            ProjectError::Store(m) => write!(f, "cannot save the trust store: {m}"),
        }
    }
}

impl std::error::Error for ProjectError {}

/// A project file as read: where it is, the hash of its bytes, and its contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The file's absolute path.
    pub file: PathBuf,
    /// The directory holding it (relative `cwd`s start here).
    pub dir: PathBuf,
    /// SHA-256 of its bytes, lowercase hex (the trust key, with `file`).
    pub sha256: String,
    /// Its contents.
    pub parsed: ProjectFile,
}

/// A terminal pane a layout starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedPane {
    /// Argument vector.
    pub command: Vec<String>,
    /// Absolute directory (the project dir joined with the pane's `cwd`).
    pub cwd: PathBuf,
    /// Placement beside the previous pane.
    pub split: Option<&'static str>,
}

/// A browser pane a layout opens.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedBrowser {
    /// The loopback port.
    pub port: u16,
    /// `http://localhost:PORT/PATH`.
    pub url: String,
    /// `iframe`, `screencast` or `popout`; `None`: the config's default.
    pub mode: Option<&'static str>,
}

/// What starting a layout means: its panes and browsers with absolute values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The layout's name.
    pub layout: String,
    /// Terminal panes, in order.
    pub panes: Vec<PlannedPane>,
    /// Browser panes, in order.
    pub browsers: Vec<PlannedBrowser>,
}

/// The nearest ancestor of `cwd` (itself included) holding a regular file named
/// [`FILE_NAME`], as that file's path.
pub fn find(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors().take(MAX_ANCESTORS).map(|d| d.join(FILE_NAME)).find(|f| f.is_file())
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses a project file's text (`file` names it in errors). Errors carry the line and
/// column of the offending text; unknown keys are errors.
pub fn parse(file: &Path, text: &str) -> Result<ProjectFile, ConfigError> {
    toml::from_str(text).map_err(|e| crate::config::toml_error(file, text, e))
}

/// Reads, hashes and parses the project file at `file` (absolute).
pub fn load(file: &Path) -> Result<Project, ProjectError> {
    let io = |m: String| {
        ProjectError::Invalid(ConfigError { file: file.to_path_buf(), line: None, column: None, message: m })
    };
    let meta = std::fs::metadata(file).map_err(|e| io(format!("cannot read the file: {e}")))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(io(format!("cannot read the file: larger than {MAX_FILE_BYTES} bytes")));
    }
    let bytes = std::fs::read(file).map_err(|e| io(format!("cannot read the file: {e}")))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| io("the file is not UTF-8 text".into()))?;
    let parsed = parse(file, text).map_err(ProjectError::Invalid)?;
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
    Ok(Project { file: file.to_path_buf(), dir, sha256: sha256_hex(&bytes), parsed })
}

impl Project {
    /// The layout called `name`, or with `None` the one named [`DEFAULT_LAYOUT`], else the first.
    pub fn layout(&self, name: Option<&str>) -> Result<&Layout, ProjectError> {
        let all = &self.parsed.layouts.0;
        let found = match name {
            Some(n) => all.iter().find(|l| l.name.0 == n),
            None => all.iter().find(|l| l.name.0 == DEFAULT_LAYOUT).or(all.first()),
        };
        found.ok_or_else(|| ProjectError::UnknownLayout {
            file: self.file.clone(),
            name: name.map(String::from),
            available: self.layout_names(),
        })
    }

    /// Every layout's name, in file order.
    pub fn layout_names(&self) -> Vec<String> {
        self.parsed.layouts.0.iter().map(|l| l.name.0.clone()).collect()
    }

    /// `layout` with absolute directories and URLs.
    pub fn plan(&self, layout: &Layout) -> Plan {
        let panes = layout
            .panes
            .0
            .iter()
            .map(|p| {
                let cwd = match &p.cwd {
                    Some(rel) => self.dir.join(&rel.0),
                    None => self.dir.clone(),
                };
                // `web/../api` and symlinks name the same directory as a running pane's cwd.
                let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
                PlannedPane { command: p.command.0.clone(), cwd, split: p.split.map(Side::as_str) }
            })
            .collect();
        let browsers = layout
            .browsers
            .0
            .iter()
            .map(|b| PlannedBrowser {
                port: b.port.0,
                url: format!("http://localhost:{}{}", b.port.0, b.path.as_ref().map_or("/", |p| p.0.as_str())),
                mode: b.mode.map(BrowserMode::as_str),
            })
            .collect();
        Plan { layout: layout.name.0.clone(), panes, browsers }
    }

    /// Every layout's plan, in file order (what the trust prompt shows).
    pub fn plans(&self) -> Vec<Plan> {
        self.parsed.layouts.0.iter().map(|l| self.plan(l)).collect()
    }
}

/// The project files in use: finding and reading them, and the trust store.
pub struct Projects {
    trust: Trust,
}

impl Projects {
    /// Project files whose trust is kept in `state_dir` (`None`: for this run only).
    pub fn new(state_dir: Option<&Path>) -> Arc<Projects> {
        Arc::new(Projects { trust: Trust::open(state_dir) })
    }

    /// The project file for a pane whose cwd is `cwd`, read and parsed.
    pub fn for_cwd(&self, cwd: &Path) -> Result<Project, ProjectError> {
        let file = find(cwd).ok_or_else(|| ProjectError::NotFound(cwd.to_path_buf()))?;
        load(&file)
    }

    /// True if and only if the human trusted this version of the project's file.
    pub fn is_trusted(&self, p: &Project) -> bool {
        self.trust.is_trusted(&p.file, &p.sha256)
    }

    /// The human trusts `file` as it was shown (`sha256`): re-read, it must still hash to
    /// that, else [`ProjectError::Changed`].
    pub fn grant(&self, file: &Path, sha256: &str) -> Result<Project, ProjectError> {
        let p = load(file)?;
        if p.sha256 != sha256 {
            return Err(ProjectError::Changed(file.to_path_buf()));
        }
        self.trust.grant(&p.file, &p.sha256).map_err(|e| ProjectError::Store(e.to_string()))?;
        Ok(p)
    }
}

/// The platform's state directory for Porthole (`$XDG_STATE_HOME/porthole` on Linux, else
/// the local data directory), or `None` when no home directory is known.
pub fn default_state_dir() -> Option<PathBuf> {
    let d = directories::ProjectDirs::from("", "", "porthole")?;
    Some(d.state_dir().unwrap_or(d.data_local_dir()).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{merge_presets, Dpr, Viewport, ViewportPx};

    fn p(text: &str) -> Result<ProjectFile, ConfigError> {
        parse(Path::new("/p/.porthole.toml"), text)
    }

    const EXAMPLE: &str = r#"
[[viewports]]
name = "Phone"
width = 390
height = 844
dpr = 3

[[layouts]]
name = "dev"
[[layouts.panes]]
command = "npm run dev"
cwd = "web"
[[layouts.panes]]
command = ["cargo", "watch", "-x", "run"]
split = "down"
[[layouts.browsers]]
port = 5173
path = "/admin?x=1"
mode = "screencast"

[[layouts]]
name = "default"
[[layouts.browsers]]
port = 8000
"#;

    #[test]
    fn a_project_file_parses_into_layouts_and_plans() {
        let f = p(EXAMPLE).unwrap();
        assert_eq!(f.viewports.0[0].name, "Phone");
        let project = Project {
            file: "/p/.porthole.toml".into(),
            dir: "/p".into(),
            sha256: sha256_hex(EXAMPLE.as_bytes()),
            parsed: f,
        };
        assert_eq!(project.layout_names(), ["dev", "default"]);
        assert_eq!(project.layout(None).unwrap().name.0, "default", "one named default wins over the first");
        let plan = project.plan(project.layout(Some("dev")).unwrap());
        assert_eq!(plan.panes[0].command, ["/bin/sh", "-c", "npm run dev"]);
        assert_eq!(plan.panes[0].cwd, PathBuf::from("/p/web"));
        assert_eq!(plan.panes[0].split, None);
        assert_eq!(plan.panes[1].command, ["cargo", "watch", "-x", "run"]);
        assert_eq!(plan.panes[1].cwd, PathBuf::from("/p"));
        assert_eq!(plan.panes[1].split, Some("down"));
        assert_eq!(plan.browsers[0].url, "http://localhost:5173/admin?x=1");
        assert_eq!(plan.browsers[0].mode, Some("screencast"));
        let e = project.layout(Some("prod")).unwrap_err();
        assert_eq!(e.status_and_code().1, "unknown_layout");
        assert!(e.to_string().contains("dev, default"), "{e}");
        let only = Project { parsed: p("[[layouts]]\nname = \"a\"\n[[layouts]]\nname = \"b\"\n").unwrap(), ..project };
        assert_eq!(only.layout(None).unwrap().name.0, "a", "else the first");
    }

    #[test]
    fn parse_errors_carry_line_and_column() {
        for (text, line, col, words) in [
            ("[[layouts]]\nname = \"dev\n", 2, 12, "basic string"),
            ("[[layouts]]\nname = \"a b\"\n", 2, 8, "layout name"),
            ("[[layouts]]\nname = \"a\"\n[[layouts.panes]]\ncomand = \"x\"\n", 4, 1, "comand"),
            ("[[layouts]]\nname = \"a\"\n[[layouts.panes]]\ncommand = \"  \"\n", 4, 11, "command is empty"),
            ("[[layouts]]\nname = \"a\"\n[[layouts.panes]]\ncommand = \"x\"\ncwd = \"/etc\"\n", 5, 7, "relative"),
            ("[[layouts]]\nname = \"a\"\n[[layouts.panes]]\ncommand = \"x\"\nsplit = \"left\"\n", 5, 9, "left"),
            ("[[layouts]]\nname = \"a\"\n[[layouts.browsers]]\nport = 70000\n", 4, 8, "1..=65535"),
            ("[[layouts]]\nname = \"a\"\n[[layouts.browsers]]\nport = 1\npath = \"x\"\n", 5, 8, "path"),
            ("[[layouts]]\nname = \"a\"\n[[layouts.browsers]]\nport = 1\nmode = \"system\"\n", 5, 8, "system"),
            ("[[viewports]]\nname = \"A\"\nwidth = 50\nheight = 500\n", 3, 9, "viewport side"),
            ("prot = 1\n", 1, 1, "prot"),
        ] {
            let e = p(text).unwrap_err();
            assert!(e.message.contains(words), "{text:?}: {e}");
            assert_eq!((e.line, e.column), (Some(line), Some(col)), "{text:?}: {e}");
            assert!(e.to_string().starts_with(&format!("/p/.porthole.toml:{line}:{col}: ")), "{e}");
        }
        let e = p("[[layouts]]\nname = \"a\"\n[[layouts]]\nname = \"a\"\n").unwrap_err();
        assert!(e.message.contains("named twice") && e.line.is_some(), "{e}");
    }

    fn vp(name: &str, width: u32) -> Viewport {
        Viewport { name: name.into(), width: ViewportPx(width), height: ViewportPx(800), dpr: Dpr(1.0), mobile: false }
    }

    #[test]
    fn presets_project_over_user_over_builtin_replacing_whole() {
        let builtin = [vp("Phone", 390), vp("Tablet", 820), vp("Laptop", 1280)];
        let user = [vp("Tablet", 800), vp("Wide", 1920)];
        let project = [Viewport { dpr: Dpr(3.0), ..vp("Phone", 400) }, vp("Wide", 2560)];
        let merged = merge_presets(&builtin, &user, &project);
        let names: Vec<(&str, u32)> = merged.iter().map(|v| (v.name.as_str(), v.width.0)).collect();
        assert_eq!(names, [("Laptop", 1280), ("Tablet", 800), ("Phone", 400), ("Wide", 2560)]);
        assert_eq!(merged[2].dpr, Dpr(3.0), "the whole definition, not a field-by-field merge");
        assert_eq!(merged[2].height, ViewportPx(800));
        assert_eq!(merge_presets(&builtin, &[], &[]), builtin.to_vec());
    }

    #[test]
    fn the_nearest_ancestor_file_is_found_and_hashed() {
        let root = std::env::temp_dir().join(format!("porthole-project-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join(FILE_NAME), "[[layouts]]\nname = \"outer\"\n").unwrap();
        std::fs::write(root.join("a").join(FILE_NAME), "[[layouts]]\nname = \"inner\"\n").unwrap();
        assert_eq!(find(&root.join("a/b/c")), Some(root.join("a").join(FILE_NAME)));
        assert_eq!(find(&root), Some(root.join(FILE_NAME)));
        let projects = Projects::new(Some(&root.join("state")));
        let pr = projects.for_cwd(&root.join("a/b")).unwrap();
        assert_eq!(pr.layout_names(), ["inner"]);
        assert_eq!(pr.sha256, sha256_hex(b"[[layouts]]\nname = \"inner\"\n"));
        assert_eq!(pr.sha256.len(), 64);
        // Trust is by content hash: a changed file asks again.
        assert!(!projects.is_trusted(&pr));
        assert_eq!(
            projects.grant(&pr.file, "0".repeat(64).as_str()).unwrap_err().status_and_code().1,
            "project_changed"
        );
        projects.grant(&pr.file, &pr.sha256).unwrap();
        assert!(projects.is_trusted(&projects.for_cwd(&root.join("a/b")).unwrap()));
        std::fs::write(root.join("a").join(FILE_NAME), "[[layouts]]\nname = \"inner2\"\n").unwrap();
        let changed = projects.for_cwd(&root.join("a/b")).unwrap();
        assert!(!projects.is_trusted(&changed), "new bytes, new hash: asked again");
        assert!(Projects::new(Some(&root.join("state"))).is_trusted(&pr), "kept in the state dir");
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(Projects::new(None).for_cwd(Path::new("/")).unwrap_err().status_and_code().1, "no_project");
    }
}
