//! `upload REF FILE…`: sets the files of an `<input type=file>` (or of the file input a
//! `<label>` is for) with `DOM.setFileInputFiles`, as a user picking them in the file
//! chooser would (the chooser is native: never drawn, never trusted input), then reads the
//! input's `files` back. The paths were checked by the caller ([`UploadFile`]).

use serde::Deserialize;
use serde_json::{json, Value};

use super::act::{input, with_dialog};
use super::error::AutomationError;
use super::node::Node;
use crate::browser::session::{call, call_on};
use crate::browser::{BrowserError, BrowserRef};

/// Most files one `upload` sets.
pub const MAX_UPLOAD_FILES: usize = 64;

/// A file checked before the page sees it: an absolute path to a regular, readable file.
#[derive(Debug, Clone, PartialEq)]
pub struct UploadFile {
    /// The absolute path.
    pub path: String,
    /// Its name (the last component), as the page's `File.name` shows it.
    pub name: String,
    /// Its size in bytes when checked.
    pub size: u64,
}

impl UploadFile {
    /// Checks `path`: absolute, at most 4096 bytes, an existing regular file that this
    /// process can open for reading. Else `bad_request` saying which rule failed.
    pub fn check(path: &str) -> Result<UploadFile, AutomationError> {
        Self::checked(path).map_err(AutomationError::BadRequest)
    }

    fn checked(path: &str) -> Result<UploadFile, String> {
        if path.is_empty() || path.len() > 4096 || path.contains('\0') {
            return Err("a file path is 1..=4096 bytes".into());
        }
        let p = std::path::Path::new(path);
        if !p.is_absolute() {
            return Err(format!("{path:?} is not an absolute path"));
        }
        let meta = std::fs::metadata(p).map_err(|e| format!("{path:?}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("{path:?} is not a regular file"));
        }
        std::fs::File::open(p).map_err(|e| format!("{path:?} cannot be read: {e}"))?;
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(UploadFile { path: path.to_string(), name, size: meta.len() })
    }
}

/// The file input the node is, or is the label of: its object id and facts, or null.
const FILE_INPUT_JS: &str = r#"function(){
  const el = (this.tagName === 'LABEL' && this.control) ? this.control : this;
  if (el.tagName !== 'INPUT' || el.type !== 'file') return null;
  return el;
}"#;

const FACTS_JS: &str = r#"function(){
  return {multiple: this.multiple, disabled: this.matches(':disabled') || !!this.closest('[inert]'),
    files: Array.from(this.files || []).map(f => ({name: f.name, size: f.size}))};
}"#;

#[derive(Debug, Deserialize)]
struct Facts {
    multiple: bool,
    disabled: bool,
    files: Vec<Chosen>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Chosen {
    name: String,
    size: u64,
}

/// Sets `files` on the file input `node` names (itself, or the input a label is for) →
/// `{"files":[{"name","size"}],"dialog"}`. Refused: not a file input, or several files for
/// an input without `multiple` (`bad_request`), a disabled input (`element_disabled`);
/// `mismatch` when the input's `files` are not those after.
pub async fn upload(browser: &BrowserRef, node: &Node, files: &[UploadFile]) -> Result<Value, AutomationError> {
    let r = call(
        &node.session,
        "Runtime.callFunctionOn",
        json!({"objectId": node.object, "functionDeclaration": FILE_INPUT_JS, "returnByValue": false}),
    )
    .await?;
    let Some(object) = r["result"]["objectId"].as_str().map(str::to_string) else {
        let tag = call_on(
            &node.session,
            &node.object,
            "function(){return (this.tagName || this.nodeName).toLowerCase()}",
            vec![],
        )
        .await?;
        return Err(AutomationError::BadRequest(format!(
            "{} is not a file input (it is <{}>): upload takes an <input type=file> or its <label>",
            node.name,
            tag.as_str().unwrap_or("?")
        )));
    };
    let facts = facts_of(node, &object).await?;
    if facts.disabled {
        return Err(AutomationError::Disabled(node.name.clone()));
    }
    if files.len() > 1 && !facts.multiple {
        return Err(AutomationError::BadRequest(format!(
            "{} takes one file (it has no multiple attribute), not {}",
            node.name,
            files.len()
        )));
    }
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let set = ("DOM.setFileInputFiles", json!({"files": paths, "objectId": object}));
    // The page's input and change handlers run before the call returns: a dialog they open
    // ends the wait.
    if input(browser, &node.session, vec![set]).await? {
        return Ok(with_dialog(json!({"files": Value::Null}), browser, true));
    }
    let now = facts_of(node, &object).await?.files;
    let want: Vec<Chosen> = files.iter().map(|f| Chosen { name: f.name.clone(), size: f.size }).collect();
    let listed = json!(now.iter().map(|c| json!({"name": c.name, "size": c.size})).collect::<Vec<_>>());
    if now != want {
        let names: Vec<&str> = now.iter().map(|c| c.name.as_str()).collect();
        return Err(AutomationError::Mismatch {
            message: format!("set {} files on {} but it holds {names:?}", files.len(), node.name),
            observed: json!({"files": listed}),
        });
    }
    Ok(with_dialog(json!({"files": listed}), browser, false))
}

async fn facts_of(node: &Node, object: &str) -> Result<Facts, AutomationError> {
    let v = call_on(&node.session, object, FACTS_JS, vec![]).await?;
    serde_json::from_value(v).map_err(|e| AutomationError::Browser(BrowserError::Cdp(format!("file input: {e}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_paths_are_checked() {
        let dir = std::env::temp_dir().join(format!("ph-upload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.txt");
        std::fs::write(&f, b"hello").unwrap();
        let ok = UploadFile::check(f.to_str().unwrap()).unwrap();
        assert_eq!((ok.name.as_str(), ok.size), ("a.txt", 5));
        assert!(UploadFile::check("a.txt").unwrap_err().to_string().contains("absolute"));
        assert!(UploadFile::check(dir.to_str().unwrap()).unwrap_err().to_string().contains("regular file"));
        assert!(UploadFile::check(dir.join("missing").to_str().unwrap()).is_err());
        assert!(UploadFile::check("").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
