//! The sidecar's import rules (ARCHITECTURE.md), checked from the source text: which
//! top-level module may name which, that the graph of modules has no cycle, and which
//! modules know nothing of HTTP. A rule broken here is a boundary moved without the map.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The source of one top-level module (`src/NAME.rs` or every file under `src/NAME/`), with
/// its `#[cfg(test)]` tails cut off (unit tests may reach anywhere).
fn module_sources(src: &Path) -> BTreeMap<String, Vec<(PathBuf, String)>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let mut mods = BTreeMap::new();
    for entry in fs::read_dir(src).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "bin" {
            continue;
        }
        let mut files = Vec::new();
        if p.is_dir() {
            walk(&p, &mut files);
        } else if p.extension().is_some_and(|e| e == "rs") {
            files.push(p.clone());
        } else {
            continue;
        }
        let texts = files
            .into_iter()
            .map(|f| {
                let text = fs::read_to_string(&f).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap().to_string();
                (f, code)
            })
            .collect();
        mods.entry(name.trim_end_matches(".rs").to_string()).or_insert_with(Vec::new).extend::<Vec<_>>(texts);
    }
    mods
}

/// Every `crate::NAME` a module's code names, NAME another top-level module.
fn graph(mods: &BTreeMap<String, Vec<(PathBuf, String)>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for (m, files) in mods {
        let mut to = BTreeSet::new();
        for (_, code) in files {
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if name != *m && mods.contains_key(&name) {
                    to.insert(name);
                }
            }
        }
        g.insert(m.clone(), to);
    }
    g
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_module_graph_has_no_cycle() {
    let g = graph(&module_sources(&src()));
    // Kahn's algorithm: what is left after peeling the modules nothing depends on is a cycle.
    let mut left: BTreeMap<&String, BTreeSet<&String>> = g.iter().map(|(m, to)| (m, to.iter().collect())).collect();
    loop {
        let leaves: Vec<&String> = left.iter().filter(|(_, to)| to.is_empty()).map(|(m, _)| *m).collect();
        if leaves.is_empty() {
            break;
        }
        for l in &leaves {
            left.remove(l);
        }
        for to in left.values_mut() {
            for l in &leaves {
                to.remove(l);
            }
        }
    }
    assert!(left.is_empty(), "modules in a cycle: {left:?} (whole graph: {g:#?})");
}

#[test]
fn only_the_api_names_the_api_and_lower_layers_name_no_upper_one() {
    let g = graph(&module_sources(&src()));
    assert!(g.len() > 10, "the walk found too few modules: {g:?}");
    // (module, modules it must never name): ARCHITECTURE.md's invariants.
    let forbidden: &[(&str, &[&str])] = &[
        ("pty", &["api", "control", "session", "browser", "viewer", "automation", "proxy", "ports"]),
        ("ports", &["api", "control", "pty", "session"]),
        ("proxy", &["api", "control", "pty", "browser", "viewer", "automation", "session"]),
        ("control", &["api", "browser", "viewer", "automation", "proxy"]),
        ("browser", &["api", "automation", "viewer", "control", "proxy"]),
        ("viewer", &["api", "automation", "control"]),
        ("automation", &["api", "control"]),
        ("session", &["api", "control"]),
        ("config", &["api", "control", "pty", "session", "project"]),
    ];
    let mut broken = BTreeSet::new();
    for (m, never) in forbidden {
        let to = g.get(*m).unwrap_or_else(|| panic!("no module {m}"));
        broken.extend(never.iter().filter(|n| to.contains(**n)).map(|n| format!("{m} -> {n}")));
    }
    for (m, to) in &g {
        if m != "api" && to.contains("api") {
            broken.insert(format!("{m} -> api"));
        }
    }
    assert!(broken.is_empty(), "imports against the map: {broken:?}");
}

#[test]
fn pty_ports_control_automation_session_and_config_know_nothing_of_http() {
    let mods = module_sources(&src());
    let mut found = Vec::new();
    for m in ["pty", "ports", "control", "automation", "session", "config", "project"] {
        for (file, code) in &mods[m] {
            for http in ["axum::", "hyper::", "tungstenite::", "tower_http::", "tower::"] {
                if code.contains(http) {
                    found.push(format!("{} names {http}", file.display()));
                }
            }
        }
    }
    assert!(found.is_empty(), "{found:?}");
}
