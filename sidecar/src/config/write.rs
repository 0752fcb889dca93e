//! Writing config keys from the app: `[agent.sealed]` (protocol §4 `PATCH
//! /api/config/agent-sealed`, issue 24) and `terminal.renderer` (`PATCH
//! /api/config/terminal`, issue 27): a patch of typed, bounded values, applied to the file in place with
//! `toml_edit` (the user's comments, order and other keys stay), checked by the same parser
//! as every load, then written atomically ([`crate::state_file::write_atomic`]). The watcher
//! (or the caller's [`super::Settings::reload`]) applies it like any other save.

use std::path::Path;

use serde_json::{Map, Value};

use super::{ConfigError, EnvSwitch, SEALED_ENV};

/// What a key of `[agent.sealed]` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`.
    Bool,
    /// An integer in `min..=max`.
    Int {
        /// Smallest value allowed.
        min: i64,
        /// Largest value allowed.
        max: i64,
    },
}

/// Every key of `[agent.sealed]` the app may write, with its kind and bounds (issue 24; the
/// `sealed` parser in `schema.rs` enforces the same bounds at load, and every write is parsed
/// by it before it reaches the disk).
pub const SEALED_KEYS: &[(&str, Kind)] = &[
    ("enabled", Kind::Bool),
    ("discovery", Kind::Bool),
    ("signatures", Kind::Bool),
    ("focus_walk", Kind::Bool),
    ("focus_walk_max_steps", Kind::Int { min: 1, max: 64 }),
    ("focus_walk_restore", Kind::Bool),
    ("part_highlight", Kind::Bool),
    ("force_open", Kind::Bool),
    ("max_frames", Kind::Int { min: 1, max: 64 }),
    ("max_controls", Kind::Int { min: 1, max: 2000 }),
    ("crop_max_side", Kind::Int { min: 64, max: 4096 }),
    ("scans_per_minute", Kind::Int { min: 1, max: 120 }),
];

/// One value to write, already checked against its key's [`Kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealedValue {
    /// A switch.
    Bool(bool),
    /// A bounded integer.
    Int(i64),
}

/// A checked patch: the keys to set (each once, in the order given) and their values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedPatch(pub Vec<(&'static str, SealedValue)>);

/// Why a write was not done.
#[derive(Debug)]
pub enum WriteError {
    /// Occurs when the patch names an unknown key, a value of the wrong kind or out of
    /// bounds, or is empty. 400 `bad_request`; the message names the key.
    Invalid(String),
    /// Occurs when `PORTHOLE_AGENT_SEALED` kills sealed content (`off`, or any value but `on`:
    /// [`EnvSwitch`]): the environment wins over the file.
    /// 409 `locked_by_environment`.
    LockedByEnvironment,
    /// Occurs when the file as it is now does not parse (the user's own edit is broken): it
    /// is not rewritten over their text. 409 `config_invalid`; the message is the parser's.
    FileInvalid(ConfigError),
    /// Occurs when the file cannot be read or written (the OS error names the call).
    /// 500 `internal`.
    Io(String),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Invalid(m) => write!(f, "{m}"),
            WriteError::LockedByEnvironment => {
                write!(f, "{SEALED_ENV} turns sealed content off whatever config.toml says (unset it and restart the sidecar to change the policy)")
            }
            WriteError::FileInvalid(e) => write!(f, "the config file does not parse, fix it first: {e}"),
            WriteError::Io(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for WriteError {}

impl SealedPatch {
    /// Checks a JSON object (`{"force_open": true, "max_frames": 8}`) key by key against
    /// [`SEALED_KEYS`]. Errors: [`WriteError::Invalid`] for an empty object, an unknown key,
    /// a value of the wrong kind or out of bounds (naming `agent.sealed.<key>`).
    pub fn parse(body: &Map<String, Value>) -> Result<SealedPatch, WriteError> {
        if body.is_empty() {
            return Err(WriteError::Invalid("the patch names no key of [agent.sealed]".into()));
        }
        let mut out = Vec::with_capacity(body.len());
        for (key, v) in body {
            let Some(&(name, kind)) = SEALED_KEYS.iter().find(|(k, _)| k == key) else {
                let known: Vec<&str> = SEALED_KEYS.iter().map(|(k, _)| *k).collect();
                return Err(WriteError::Invalid(format!(
                    "agent.sealed has no key {key:?} (known: {})",
                    known.join(", ")
                )));
            };
            let value = match (kind, v) {
                (Kind::Bool, Value::Bool(b)) => SealedValue::Bool(*b),
                (Kind::Bool, _) => {
                    return Err(WriteError::Invalid(format!("agent.sealed.{name} must be true or false")))
                }
                (Kind::Int { min, max }, Value::Number(n)) if n.as_i64().is_some_and(|i| (min..=max).contains(&i)) => {
                    SealedValue::Int(n.as_i64().expect("checked above"))
                }
                (Kind::Int { min, max }, _) => {
                    return Err(WriteError::Invalid(format!("agent.sealed.{name} must be an integer in {min}..={max}")))
                }
            };
            out.push((name, value));
        }
        Ok(SealedPatch(out))
    }
}

/// Applies `patch` to `text` (a config file's contents) and returns the new text: each key
/// set in `[agent.sealed]` (created when missing; a `[agent]` header is not added for it),
/// a value already there replaced in place with the comments around it kept; every other
/// byte of the file unchanged. Errors: [`WriteError::Invalid`] when `agent` or
/// `agent.sealed` exists and is not a table.
pub fn apply_patch(text: &str, patch: &SealedPatch) -> Result<String, WriteError> {
    let values = patch
        .0
        .iter()
        .map(|(k, v)| {
            let v = match v {
                SealedValue::Bool(b) => toml_edit::Value::from(*b),
                SealedValue::Int(i) => toml_edit::Value::from(*i),
            };
            (*k, v)
        })
        .collect();
    apply_in(text, &["agent", "sealed"], values)
}

/// Sets `values` in the table at `path` of `text` (each table created when missing; an
/// intermediate one implicit, so no empty header is added for it), a value already there
/// replaced in place with its comments; every other byte unchanged.
fn apply_in(text: &str, path: &[&str], values: Vec<(&str, toml_edit::Value)>) -> Result<String, WriteError> {
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e: toml_edit::TomlError| WriteError::Invalid(format!("the file does not parse: {e}")))?;
    let mut table: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    for (i, name) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        table = table
            .entry(name)
            .or_insert_with(|| {
                let mut t = toml_edit::Table::new();
                t.set_implicit(!last);
                toml_edit::Item::Table(t)
            })
            .as_table_like_mut()
            .ok_or_else(|| WriteError::Invalid(format!("{} in the file is not a table", path[..=i].join("."))))?;
    }
    for (key, mut v) in values {
        match table.get_mut(key).and_then(|i| i.as_value_mut()) {
            Some(old) => {
                // Keep the comment after the old value and the spacing around it.
                *v.decor_mut() = old.decor().clone();
                *old = v;
            }
            None => {
                table.insert(key, toml_edit::Item::Value(v));
            }
        }
    }
    Ok(doc.to_string())
}

/// Writes `patch` into the config file `file` (a missing file is created with just the
/// section): refused while `PORTHOLE_AGENT_SEALED` kills it ([`WriteError::LockedByEnvironment`])
/// or when the file as it is does not parse ([`WriteError::FileInvalid`]); the new text must
/// parse with [`super::parse`] (the load's own bounds) before it is written, atomically.
/// Blocking (file I/O): run it off the async runtime.
pub fn write_sealed(file: &Path, patch: &SealedPatch) -> Result<(), WriteError> {
    if EnvSwitch::from_env().kills() {
        return Err(WriteError::LockedByEnvironment);
    }
    write_with(file, |text| apply_patch(text, patch))
}

/// Writes `terminal.renderer = renderer` into the config file `file` as [`write_sealed`]
/// writes its keys (the file as it is must parse; the new text must load; atomic). Blocking.
pub fn write_terminal_renderer(file: &Path, renderer: super::TerminalRenderer) -> Result<(), WriteError> {
    write_with(file, |text| {
        apply_in(text, &["terminal"], vec![("renderer", toml_edit::Value::from(renderer.as_str()))])
    })
}

/// Writes `agent.show_secrets = show` into the config file `file` as [`write_sealed`] writes
/// its keys (the file as it is must parse; the new text must load; atomic). Blocking.
pub fn write_show_secrets(file: &Path, show: bool) -> Result<(), WriteError> {
    write_with(file, |text| apply_in(text, &["agent"], vec![("show_secrets", toml_edit::Value::from(show))]))
}

/// Reads `file` (missing: empty), checks it parses, applies `apply`, checks the new text
/// loads, and writes it atomically.
fn write_with(file: &Path, apply: impl FnOnce(&str) -> Result<String, WriteError>) -> Result<(), WriteError> {
    let text = match std::fs::metadata(file) {
        Ok(m) if m.len() > super::MAX_FILE_BYTES => {
            return Err(WriteError::Io(format!("{} is larger than {} bytes", file.display(), super::MAX_FILE_BYTES)))
        }
        Ok(_) => std::fs::read_to_string(file).map_err(|e| WriteError::Io(format!("read({}): {e}", file.display())))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(WriteError::Io(format!("stat({}): {e}", file.display()))),
    };
    super::parse(file, &text).map_err(WriteError::FileInvalid)?;
    let new = apply(&text)?;
    super::parse(file, &new).map_err(|e| WriteError::Invalid(format!("the written file would not load: {e}")))?;
    crate::state_file::write_atomic(file, new.as_bytes())
        .map_err(|e| WriteError::Io(format!("writing {}: {e}", file.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(v: Value) -> Result<SealedPatch, WriteError> {
        SealedPatch::parse(v.as_object().unwrap())
    }

    #[test]
    fn a_patch_is_typed_and_bounded_per_key() {
        let p = patch(json!({"force_open": true, "max_frames": 64})).unwrap();
        assert_eq!(p.0, [("force_open", SealedValue::Bool(true)), ("max_frames", SealedValue::Int(64))]);
        for (bad, words) in [
            (json!({}), "names no key"),
            (json!({"forceOpen": true}), "no key \"forceOpen\""),
            (json!({"force_open": 1}), "agent.sealed.force_open must be true or false"),
            (json!({"max_frames": 65}), "agent.sealed.max_frames must be an integer in 1..=64"),
            (json!({"max_frames": 0}), "1..=64"),
            (json!({"crop_max_side": 63}), "64..=4096"),
            (json!({"scans_per_minute": 1.5}), "1..=120"),
            (json!({"max_controls": "200"}), "1..=2000"),
        ] {
            let e = patch(bad.clone()).unwrap_err().to_string();
            assert!(e.contains(words), "{bad}: {e}");
        }
    }

    #[test]
    fn a_write_keeps_comments_order_and_other_keys() {
        let text = "# my config\n[font]\nsize = 14 # big\n\n[agent.sealed]\n# the master switch\nenabled = true   # on\nmax_frames = 4\n\n[theme]\nmode = \"dark\"\n";
        let p = patch(json!({"enabled": false, "force_open": true})).unwrap();
        let out = apply_patch(text, &p).unwrap();
        assert_eq!(
            out,
            "# my config\n[font]\nsize = 14 # big\n\n[agent.sealed]\n# the master switch\nenabled = false   # on\nmax_frames = 4\nforce_open = true\n\n[theme]\nmode = \"dark\"\n"
        );
    }

    #[test]
    fn a_missing_section_is_added_without_an_empty_agent_header() {
        let out = apply_patch("[font]\nsize = 14\n", &patch(json!({"max_frames": 8})).unwrap()).unwrap();
        assert_eq!(out, "[font]\nsize = 14\n\n[agent.sealed]\nmax_frames = 8\n");
        let out = apply_patch("", &patch(json!({"enabled": false})).unwrap()).unwrap();
        assert_eq!(out, "[agent.sealed]\nenabled = false\n");
    }

    #[test]
    fn a_non_table_agent_is_refused() {
        let e = apply_patch("agent = 3\n", &patch(json!({"enabled": false})).unwrap()).unwrap_err();
        assert!(e.to_string().contains("agent in the file is not a table"), "{e}");
    }

    #[test]
    fn the_renderer_is_written_into_terminal_keeping_what_is_there() {
        let r = super::super::TerminalRenderer::Dom;
        let v = || vec![("renderer", toml_edit::Value::from(r.as_str()))];
        assert_eq!(apply_in("", &["terminal"], v()).unwrap(), "[terminal]\nrenderer = \"dom\"\n");
        let kept =
            apply_in("[terminal]\nscrollback_lines = 5 # mine\nrenderer = \"webgl\" # fast\n", &["terminal"], v())
                .unwrap();
        assert_eq!(kept, "[terminal]\nscrollback_lines = 5 # mine\nrenderer = \"dom\" # fast\n");
    }

    #[test]
    fn show_secrets_goes_into_agent_before_its_sealed_table() {
        let v = |b: bool| vec![("show_secrets", toml_edit::Value::from(b))];
        assert_eq!(apply_in("", &["agent"], v(true)).unwrap(), "[agent]\nshow_secrets = true\n");
        let with_sealed = "# mine\n[agent.sealed]\nenabled = false\n";
        let out = apply_in(with_sealed, &["agent"], v(true)).unwrap();
        let cfg: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(cfg["agent"]["show_secrets"].as_bool(), Some(true), "{out}");
        assert_eq!(cfg["agent"]["sealed"]["enabled"].as_bool(), Some(false), "{out}");
        // The comment stays with the table it was written above.
        assert!(out.contains("# mine\n[agent.sealed]\nenabled = false\n"), "{out}");
        let off = apply_in("[agent]\nshow_secrets = true # for the HAR\n", &["agent"], v(false)).unwrap();
        assert_eq!(off, "[agent]\nshow_secrets = false # for the HAR\n");
    }
}
