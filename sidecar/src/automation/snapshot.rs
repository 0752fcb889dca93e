//! `snapshot`: the page as an outline of roles, names and states, with refs on the elements
//! that can be acted on (DESIGN §12). Source: a walk of each frame's document in the page
//! ([`super::walk`], `outline.js` in Porthole's isolated world: roles, names, states and
//! visibility as the page renders them), joined to one `DOMSnapshot.captureSnapshot` per
//! frame process ([`super::dom`]: `backendNodeId`s for refs, `isClickable`, closed shadow
//! roots, frames). Chromium's accessibility tree is not read: on a page of 5,000 elements it
//! alone takes longer than the whole outline may. Out-of-process (cross-site) frames are
//! read through a child session on their target ([`super::frames`]) and shown in place,
//! under their `<iframe>`.
//!
//! Rules: an element gets a ref when it has an actionable role (or is a visible clickable
//! element with no role of its own and no control inside) and is visible, enabled, not
//! inert. A closed shadow root is not entered (no DOM-domain or accessibility work on it):
//! its host is shown with `[closed shadow root]`, and `snapshot --sealed` (the `sealed`
//! module) lists what it holds, on request and as the human's policy allows.
//! Password and payment-card values are shown as `[filled]`, never as text (they never
//! leave the page).

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use chromiumoxide::Page;
use serde_json::{json, Value};

use super::dom;
use super::frames::MAX_CHILD_SESSIONS;
use super::walk::{flag, Doc, El, Kind, Walked, WALK_JS, WORLD};
use crate::browser::session::call;
use crate::browser::session::Session;
use crate::browser::BrowserError;

/// Default output budget of a snapshot, in bytes.
pub const DEFAULT_MAX_BYTES: usize = 16 * 1024;
/// Allowed `max_bytes`.
pub const MAX_BYTES_RANGE: std::ops::RangeInclusive<usize> = 1024..=1024 * 1024;
/// Longest name, value or text shown on one outline line, in characters: a longer one ends
/// with "…", its line is counted in the snapshot's `shortened`, and `find` or `text` read it
/// whole (docs/cli.md). 300 holds an error message or a short paragraph whole.
pub const MAX_NAME_CHARS: usize = 300;
/// Most descendants looked at to tell a clickable container from a clickable control.
const MAX_CONTAINER_SCAN: usize = 2000;

/// Roles a user acts on: each visible, enabled one gets a ref.
const ACTIONABLE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];
/// Appended to a closed shadow host's line: what it holds is not read unless asked.
pub const SEALED_MARK: &str = " [closed shadow root]";
/// The line a snapshot ends with when it shows a closed shadow host: how to ask.
pub const SEALED_HINT: &str =
    "(controls inside a [closed shadow root] are not listed; 'ph browser snapshot --sealed' lists them, as the policy allows)";
/// Roles whose value is shown (and whose children, the editor's own text, are not).
const TEXT_ENTRY: &[&str] = &["textbox", "searchbox", "spinbutton"];
/// One frame of the tab, from `Page.getFrameTree`.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Frame id.
    pub id: String,
    /// Its document's loader id.
    pub loader: String,
    /// Its URL, without fragment.
    pub url: String,
    /// The out-of-process frame targets from the tab down to its process, outermost first
    /// (empty for the tab's own process).
    pub targets: Vec<String>,
    /// Its process's index in [`Captured::dom`].
    pub process: usize,
}

/// The frames of a `Page.getFrameTree` answer, its root first (`targets` empty, `process`
/// 0: the caller sets them).
pub fn frames(tree: &Value) -> Vec<Frame> {
    fn walk(t: &Value, out: &mut Vec<Frame>) {
        let f = &t["frame"];
        out.push(Frame {
            id: f["id"].as_str().unwrap_or("").to_string(),
            loader: f["loaderId"].as_str().unwrap_or("").to_string(),
            url: f["url"].as_str().unwrap_or("").to_string(),
            targets: Vec::new(),
            process: 0,
        });
        for c in t["childFrames"].as_array().into_iter().flatten() {
            walk(c, out);
        }
    }
    let mut out = Vec::new();
    walk(&tree["frameTree"], &mut out);
    out
}

/// What one capture read: the frames, and each frame's walked document joined to its DOM
/// nodes.
pub struct Captured {
    /// Frames, the main frame first, then its process's other frames, then each
    /// out-of-process frame's.
    pub frames: Vec<Frame>,
    /// Walked documents by frame id (frames whose walk failed, going away, are missing).
    pub docs: HashMap<String, Doc>,
    /// Closed hosts' component signatures were read and are shown (`agent.sealed.signatures`).
    pub signatures: bool,
}

impl Captured {
    /// The main frame's document title ("" when unknown).
    pub fn title(&self) -> String {
        self.frames.first().and_then(|f| self.docs.get(&f.id)).map(|d| d.title.clone()).unwrap_or_default()
    }
}

/// The execution context of Porthole's isolated world ([`WORLD`]) in frame `frame` of
/// `session` (Chromium keeps one per frame and name: the same id each time).
async fn world(session: &Session, frame: &str) -> Result<i64, BrowserError> {
    let w = call(session, "Page.createIsolatedWorld", json!({"frameId": frame, "worldName": WORLD})).await?;
    w["executionContextId"]
        .as_i64()
        .ok_or_else(|| BrowserError::Cdp("Page.createIsolatedWorld: no executionContextId".into()))
}

/// `Runtime.callFunctionOn`'s params for the walk in execution context `ctx`.
fn walk_params(ctx: i64, sig: bool) -> Value {
    json!({"functionDeclaration": WALK_JS, "executionContextId": ctx, "returnByValue": true,
           "arguments": [{"value": {"sig": sig}}]})
}

/// Runs the walk in frame `frame`'s isolated world of `session` → its answer.
async fn walk(session: &Session, frame: &str, sig: bool) -> Result<Walked, BrowserError> {
    let ctx = world(session, frame).await?;
    let t = Instant::now();
    let r = session
        .call_within("Runtime.callFunctionOn", walk_params(ctx, sig), crate::browser::PAGE_READ_BOUND_MS)
        .await?;
    tracing::debug!("snapshot: walk of frame {frame}: {} ms", t.elapsed().as_millis());
    answer(r)
}

/// The walk of a `Runtime.callFunctionOn` answer (a JSON string, [`WALK_JS`]), or what it threw.
fn answer(r: Value) -> Result<Walked, BrowserError> {
    if let Some(ex) = r.get("exceptionDetails") {
        let text = ex["exception"]["description"].as_str().or(ex["text"].as_str()).unwrap_or("an exception");
        return Err(BrowserError::Cdp(format!("the outline walk threw: {text}")));
    }
    let text =
        r["result"]["value"].as_str().ok_or_else(|| BrowserError::Cdp("the outline walk answered no string".into()))?;
    Walked::parse(text).map_err(|e| BrowserError::Cdp(format!("the outline walk's answer: {e}")))
}

/// The walk of a whole `Runtime.callFunctionOn` answer message's text (`{"id":…,"result":…}`
/// or `{"id":…,"error":…}`, as `browser::exchange_each` gives it), or what went wrong.
fn answer_text(text: &str) -> Result<Walked, BrowserError> {
    #[derive(serde::Deserialize)]
    struct Message {
        result: Option<Value>,
        error: Option<Value>,
    }
    let m: Message =
        serde_json::from_str(text).map_err(|e| BrowserError::Cdp(format!("the outline walk's answer: {e}")))?;
    match (m.result, m.error) {
        (_, Some(e)) => {
            Err(BrowserError::Cdp(format!("Runtime.callFunctionOn: {}", e["message"].as_str().unwrap_or("an error"))))
        }
        (Some(r), None) => answer(r),
        (None, None) => Err(BrowserError::Cdp("the outline walk answered nothing".into())),
    }
}

/// What one frame process shows: its frames and their walked documents. A walk and its
/// DOM snapshot that do not join (the page changed between them) are read once more; what
/// still does not join is shown without refs. The tab's own process, when `devtools` is
/// known, is read on a connection of its own ([`read_own`]); an out-of-process frame's
/// through its child session, the frame tree and the DOM snapshot at once and each frame's
/// walk as soon as the frame tree names it (Chromium runs them one after the other; the
/// snapshot is parsed while the walks run).
async fn read(
    session: &Session,
    process: usize,
    sig: bool,
    devtools: Option<&str>,
) -> Result<(Vec<Frame>, Vec<Doc>), BrowserError> {
    let started = Instant::now();
    let ms = |t: Instant| t.elapsed().as_millis();
    let own = devtools.filter(|_| session.targets().is_empty());
    let mut attempt = 0;
    loop {
        attempt += 1;
        let (frames, mut walks, dom) = match own {
            Some(devtools) => read_own(session, devtools, process, sig).await?,
            None => {
                let walks = async {
                    let frames = frame_tree(session, process).await?;
                    let walks = futures_util::future::join_all(frames.iter().map(|f| walk(session, &f.id, sig))).await;
                    Ok::<_, BrowserError>((frames, walks))
                };
                let dom = async {
                    let t = Instant::now();
                    let snap = session
                        .call_within(
                            "DOMSnapshot.captureSnapshot",
                            json!({"computedStyles": []}),
                            crate::browser::PAGE_READ_BOUND_MS,
                        )
                        .await?;
                    let call_ms = ms(t);
                    let t = Instant::now();
                    let docs = dom::parse(&snap);
                    tokio::task::spawn_blocking(move || drop(snap));
                    tracing::debug!("snapshot: DOMSnapshot.captureSnapshot {call_ms} ms, parsed in {} ms", ms(t));
                    Ok::<_, BrowserError>(docs)
                };
                let (walks, dom) = tokio::join!(walks, dom);
                let ((frames, walks), dom) = (walks?, dom?);
                (frames, walks, dom)
            }
        };
        // The process's root frame must be readable: its document may have been replaced
        // between the world's making and the walk (a navigation), so it is read once more.
        if let Some(Err(e)) = walks.first() {
            if attempt == 1 && matches!(e, BrowserError::Cdp(_)) {
                tracing::debug!("snapshot: the walk failed ({e}): again");
                continue;
            }
            // Its error, returned.
            walks.swap_remove(0)?;
        }
        let mut docs = Vec::new();
        let mut mismatches = 0;
        for (f, w) in frames.iter().zip(walks) {
            let w = match w {
                Ok(w) => w,
                // A child frame may be going away.
                Err(e) => {
                    tracing::debug!("walk of frame {}: {e}", f.id);
                    continue;
                }
            };
            let Some(d) = dom.iter().find(|d| d.frame == f.id) else { continue };
            let mut doc = Doc { frame: f.id.clone(), ..Doc::default() };
            doc.roots = doc.append_walked(w, None);
            let roots = doc.roots.clone();
            let mut hosts = Vec::new();
            mismatches += doc.join(&roots, d, &d.children.first().cloned().unwrap_or_default(), &mut hosts);
            // Closed shadow roots are not entered: their hosts are marked (`sealed_host`) and
            // `snapshot --sealed` reads them when asked (issue 24: quiet by default).
            doc.adopt_owned();
            docs.push(doc);
        }
        if mismatches == 0 || attempt == 2 {
            tracing::debug!(
                "snapshot: frame process {process} read in {} ms ({} frames, {mismatches} lists not joined)",
                ms(started),
                frames.len()
            );
            return Ok((frames, docs));
        }
        tracing::debug!("snapshot: the page changed while it was read ({mismatches} lists not joined): again");
    }
}

/// The frames `Page.getFrameTree` names in `session` (its frame process `process`).
async fn frame_tree(session: &Session, process: usize) -> Result<Vec<Frame>, BrowserError> {
    let mut frames = frames(&call(session, "Page.getFrameTree", json!({})).await?);
    let targets = session.targets();
    for f in &mut frames {
        f.targets = targets.clone();
        f.process = process;
    }
    Ok(frames)
}

/// A frame's walk, or why it has none.
type WalkResult = Result<Walked, BrowserError>;

/// [`read`] of the tab's own process through `devtools` (`host:port`), on a DevTools
/// connection of its own (`browser::exchange_each`): every frame's walk, then the
/// `DOMSnapshot.captureSnapshot`, sent at once, so the renderer runs them back to back and
/// the snapshot's 4 MB (at 20,000 elements) are made and sent after the walks, not while
/// they run. The answers are parsed typed off the async workers ([`Walked`], each as it
/// arrives; [`dom::Snapshot`]): chromiumoxide would first make a `serde_json::Value` of
/// each, which cost as long again. Counted as the tab's commands like any other.
async fn read_own(
    session: &Session,
    devtools: &str,
    process: usize,
    sig: bool,
) -> Result<(Vec<Frame>, Vec<WalkResult>, Vec<dom::DomDoc>), BrowserError> {
    const SNAPSHOT: &str = "DOMSnapshot.captureSnapshot";
    const CALL: &str = "Runtime.callFunctionOn";
    let t = Instant::now();
    let frames = frame_tree(session, process).await?;
    let worlds = futures_util::future::join_all(frames.iter().map(|f| world(session, &f.id))).await;
    let tab = session.page().target_id().as_ref().to_string();
    let mut calls: Vec<(&str, Value)> = Vec::new();
    for ctx in worlds.iter().flatten() {
        calls.push((CALL, walk_params(*ctx, sig)));
    }
    calls.push((SNAPSHOT, json!({"computedStyles": []})));
    for (method, params) in &calls {
        crate::browser::cdp_counts::note_command(&tab, method, params);
    }
    // Each walk is parsed as it arrives, while the renderer makes the DOM snapshot.
    let walks_sent = calls.len() - 1;
    let mut parsing = Vec::with_capacity(walks_sent);
    let mut snapshot = String::new();
    let exchange = crate::browser::exchange_each(devtools, &tab, calls, |i, text| {
        if i < walks_sent {
            parsing.push(tokio::task::spawn_blocking(move || answer_text(&text)));
        } else {
            snapshot = text;
        }
    });
    crate::browser::bounded_for(SNAPSHOT, crate::browser::PAGE_READ_BOUND_MS, exchange).await?;
    let answered = t.elapsed().as_millis();
    let dom = tokio::task::spawn_blocking(move || dom::parse_answer(&snapshot))
        .await
        .map_err(|e| BrowserError::Cdp(format!("{SNAPSHOT}: {e}")))?
        .map_err(|e| BrowserError::Cdp(format!("{SNAPSHOT}: {e}")));
    let mut parsed = futures_util::future::join_all(parsing).await.into_iter();
    let walks: Vec<WalkResult> = worlds
        .into_iter()
        .map(|w| match (w, parsed.next()) {
            (Err(e), _) => Err(e),
            (Ok(_), Some(Ok(walk))) => walk,
            (Ok(_), Some(Err(e))) => Err(BrowserError::Cdp(format!("{CALL}: {e}"))),
            (Ok(_), None) => Err(BrowserError::Cdp(format!("{CALL}: no answer"))),
        })
        .collect();
    tracing::debug!(
        "snapshot: walks and DOM snapshot (own connection) answered in {answered} ms, parsed in {} ms",
        t.elapsed().as_millis() - answered
    );
    Ok((frames, walks, dom?))
}

/// Reads the tab's frame process, then each out-of-process frame under a frame owner it
/// shows (attached to its target, at most [`MAX_CHILD_SESSIONS`]), recursively. A frame
/// owner whose frame was read gets it as its `child_frame`. `signatures`: read closed hosts'
/// surfaces and show their component signatures. `devtools`: the browser's DevTools `host:port`,
/// for the tab's own DOM snapshot on a connection of its own (`None`: through chromiumoxide).
pub async fn capture(page: &Page, signatures: bool, devtools: Option<&str>) -> Result<Captured, BrowserError> {
    let top = Session::from(page);
    let (frames, docs) = read(&top, 0, signatures, devtools).await?;
    let mut c = Captured { frames, docs: docs.into_iter().map(|d| (d.frame.clone(), d)).collect(), signatures };
    let mut sessions = vec![top];
    let mut i = 0;
    while i < sessions.len() {
        // Frame owners of this process with no frame of theirs read: (frame id, item, backend).
        let mut owners: Vec<(String, usize, i64)> = Vec::new();
        for f in c.frames.iter().filter(|f| f.process == i) {
            let Some(doc) = c.docs.get(&f.id) else { continue };
            for (k, _) in doc.items.iter().enumerate() {
                let Some(e) = doc.el(k) else { continue };
                // A frame the page does not show offers nothing to act on.
                let shown = e.has(flag::VISIBLE) && e.boxed && !e.has(flag::IGNORED) && !e.pruned;
                if matches!(e.tag.as_str(), "IFRAME" | "FRAME") && e.child_frame.is_none() && shown {
                    if let Some(b) = e.backend {
                        owners.push((f.id.clone(), k, b));
                    }
                }
            }
        }
        owners.sort_by_key(|o| o.2);
        for (doc_frame, item, owner) in owners {
            if sessions.len() > MAX_CHILD_SESSIONS {
                break;
            }
            let d = call(&sessions[i], "DOM.describeNode", json!({"backendNodeId": owner})).await;
            let Some(frame) = d.ok().and_then(|d| d["node"]["frameId"].as_str().map(str::to_string)) else {
                continue;
            };
            // A frame with no target of its own (not loaded yet, or gone) stays not included.
            let child = match sessions[i].attach(&frame, owner).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::debug!("attach to frame {frame}: {e}");
                    continue;
                }
            };
            let process = sessions.len();
            match read(&child, process, signatures, None).await {
                Ok((frames, docs)) => {
                    c.frames.extend(frames);
                    c.docs.extend(docs.into_iter().map(|d| (d.frame.clone(), d)));
                    if let Some(e) = c.docs.get_mut(&doc_frame).and_then(|d| d.el_mut(item)) {
                        e.child_frame = Some(frame);
                    }
                    sessions.push(child);
                }
                Err(e) => tracing::debug!("frame {frame}: {e}"),
            }
        }
        i += 1;
    }
    Ok(c)
}
/// One line of the outline.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Line {
    /// Nesting depth (0 at the top).
    pub depth: usize,
    /// The line without indentation, e.g. `button "Save" [ref=e3]`.
    pub text: String,
    /// True for controls (with or without a ref): what `-i` lists.
    pub control: bool,
    /// True if the line carries a ref.
    pub has_ref: bool,
    /// The role shown (`button`, `heading`, `clickable`, a generic element's tag), or `text`
    /// for a text line.
    pub role: String,
    /// The whole name (or a text line's whole text), whitespace collapsed, never shortened:
    /// what `find` matches and `text` prints.
    pub name: String,
    /// The ref number the line carries.
    pub num: Option<u64>,
    /// A heading's level.
    pub level: Option<i64>,
    /// The name, value or text was shortened to [`MAX_NAME_CHARS`] on this line.
    pub shortened: bool,
}

/// Builds the outline of `c`, minting refs with `mint(frame id, backendNodeId)` (which returns
/// the ref number, or `None` when the frame is unknown).
pub fn outline(c: &Captured, mint: &mut dyn FnMut(&str, i64) -> Option<u64>) -> Vec<Line> {
    let mut w = Walker { c, mint, out: Vec::new(), visited: HashSet::new() };
    if let Some(main) = c.frames.first() {
        w.frame(&main.id, 0);
    }
    w.out
}

/// The outline of one element and what is inside it: node `backend` of frame `frame` at depth
/// 0. `None` when the element is not rendered (or not in the page any more).
pub fn outline_of(
    c: &Captured,
    frame: &str,
    backend: i64,
    mint: &mut dyn FnMut(&str, i64) -> Option<u64>,
) -> Option<Vec<Line>> {
    let doc = c.docs.get(frame)?;
    let id = (0..doc.items.len()).find(|&i| doc.el(i).is_some_and(|e| e.backend == Some(backend) && !e.pruned))?;
    let mut w = Walker { c, mint, out: Vec::new(), visited: HashSet::new() };
    w.visited.insert(frame.to_string());
    w.node(doc, id, 0, "");
    Some(w.out)
}

/// A covering element as [`cover_of`] names it: its role and name, and (outline label, ref)
/// of the controls inside it.
pub type CoverNamed = (Option<String>, Vec<(String, String)>);

/// The element covering another (node `backend` of frame `frame`), as the snapshot shows it:
/// its role and name (`dialog "Cookie consent"`, the name cut at 80 characters) when it has
/// a role and a name, and up to `max` of the refs inside it (each with its outline line's
/// role and name: `button "Accept all"`), minted with `mint` as a snapshot mints them. `None`
/// when it is not rendered.
pub fn cover_of(
    c: &Captured,
    frame: &str,
    backend: i64,
    max: usize,
    mint: &mut dyn FnMut(&str, i64) -> Option<u64>,
) -> Option<CoverNamed> {
    let doc = c.docs.get(frame)?;
    let e = (0..doc.items.len()).find_map(|i| doc.el(i).filter(|e| e.backend == Some(backend) && !e.pruned))?;
    let own_line = !e.role.is_empty() && !e.has(flag::IGNORED);
    let lines = outline_of(c, frame, backend, mint)?;
    let label = |l: &Line| {
        if l.name.is_empty() {
            l.role.clone()
        } else {
            format!("{} {}", l.role, quote(&clip(&l.name, 80)))
        }
    };
    let named = lines.first().filter(|l| own_line && l.depth == 0 && !l.name.is_empty()).map(label);
    let refs = lines.iter().filter_map(|l| Some((label(l), format!("e{}", l.num?)))).take(max).collect();
    Some((named, refs))
}

struct Walker<'a> {
    c: &'a Captured,
    mint: &'a mut dyn FnMut(&str, i64) -> Option<u64>,
    out: Vec<Line>,
    visited: HashSet<String>,
}

/// `t` with whitespace collapsed, and cut to `n` characters (the last one "…") when longer.
fn clip(t: &str, n: usize) -> String {
    let t = collapse(t);
    if t.chars().count() <= n {
        t
    } else {
        format!("{}…", t.chars().take(n - 1).collect::<String>())
    }
}

/// `t` with each run of whitespace one space, trimmed.
fn collapse(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// True if [`clip`] shortens `t` at `n`.
fn clipped(t: &str, n: usize) -> bool {
    // Most texts are short: no copy for them.
    t.chars().count() > n && collapse(t).chars().count() > n
}

impl<'a> Walker<'a> {
    fn frame(&mut self, frame: &str, depth: usize) {
        if !self.visited.insert(frame.to_string()) {
            return;
        }
        let c: &'a Captured = self.c;
        let Some(doc) = c.docs.get(frame) else { return };
        for &r in &doc.roots {
            self.node(doc, r, depth, "");
        }
    }

    /// The text under node `id`, for a clickable element with no name of its own.
    fn text_of(doc: &Doc, id: usize, out: &mut String) {
        let Some(n) = doc.items.get(id) else { return };
        match &n.kind {
            Kind::Text(t) => {
                out.push(' ');
                out.push_str(t);
            }
            Kind::El(e) if e.pruned || e.has(flag::IGNORED) => {}
            Kind::El(_) => {
                for &c in &n.children {
                    if out.len() > 4 * MAX_NAME_CHARS {
                        return;
                    }
                    Self::text_of(doc, c, out);
                }
            }
        }
    }

    /// True if a descendant of node `id` has an actionable role (looked at: the first
    /// [`MAX_CONTAINER_SCAN`] nodes).
    fn has_control_inside(doc: &Doc, id: usize, seen: &mut usize) -> bool {
        let Some(n) = doc.items.get(id) else { return false };
        n.children.iter().any(|&c| {
            *seen += 1;
            if *seen > MAX_CONTAINER_SCAN {
                return false;
            }
            match doc.el(c) {
                Some(e) if e.pruned => false,
                Some(e) => ACTIONABLE.contains(&e.role.as_str()) || Self::has_control_inside(doc, c, seen),
                None => false,
            }
        })
    }

    fn node(&mut self, doc: &'a Doc, id: usize, depth: usize, parent_name: &str) {
        let Some(item) = doc.items.get(id) else { return };
        let e = match &item.kind {
            Kind::Text(t) => {
                let name = clip(t, MAX_NAME_CHARS);
                // Text a name already says (a button's label) is not said twice.
                if !name.is_empty() && !parent_name.contains(&name) {
                    self.out.push(Line {
                        depth,
                        text: format!("text: {}", quote(&name)),
                        role: "text".into(),
                        name: collapse(t),
                        shortened: clipped(t, MAX_NAME_CHARS),
                        ..Line::default()
                    });
                }
                return;
            }
            Kind::El(e) if e.pruned => return,
            Kind::El(e) => e,
        };
        let role = e.role.as_str();
        let ignored = e.has(flag::IGNORED);
        let generic = role.is_empty() || ignored;
        let usable = e.has(flag::VISIBLE) && e.boxed && !e.has(flag::DISABLED);
        // A container that only delegates its children's clicks (React listens on its root)
        // is not itself a control: its controls are.
        let dom_clickable = generic
            && !ignored
            && e.clickable
            && usable
            && !matches!(e.tag.as_str(), "HTML" | "BODY" | "LABEL")
            && !Self::has_control_inside(doc, id, &mut 0);
        let mut child_depth = depth;
        let mut shown_name = None;
        // A closed shadow host is always shown (by its tag when it has no role): what it
        // holds is not, and the line says so.
        if !generic || dom_clickable || e.sealed_host {
            let name = clip(&e.name, MAX_NAME_CHARS);
            // The whole name, for `find` and `text`: a clickable without one is named by its text.
            let mut full = e.name.as_str();
            let mut own_text = String::new();
            let (shown_role, name) = if dom_clickable {
                if name.is_empty() {
                    Self::text_of(doc, id, &mut own_text);
                    full = &own_text;
                }
                ("clickable".to_string(), if name.is_empty() { clip(full, MAX_NAME_CHARS) } else { name })
            } else if generic {
                (e.tag.to_ascii_lowercase(), name)
            } else {
                (role.to_string(), name)
            };
            // A closed host gets a ref of its own (`focus-walk` starts from it, a click lands
            // on its visible point): what it holds gets none, `snapshot --sealed` tokens do.
            let acts = dom_clickable || ACTIONABLE.contains(&role) || e.sealed_host;
            let control = acts;
            let mut text = shown_role.clone();
            if !name.is_empty() {
                text.push(' ');
                text.push_str(&quote(&name));
            }
            shown_name = Some(name);
            states(e, &mut text);
            if e.sealed_host {
                text.push_str(SEALED_MARK);
                if self.c.signatures && !e.signature.is_empty() {
                    text.push_str(&format!(" [sig={}]", e.signature));
                }
            }
            let mut num = None;
            if acts && usable {
                num = e.backend.and_then(|b| (self.mint)(&doc.frame, b));
                if let Some(n) = num {
                    text.push_str(&format!(" [ref=e{n}]"));
                }
            }
            let mut shortened = clipped(full, MAX_NAME_CHARS);
            let full = collapse(full);
            if TEXT_ENTRY.contains(&role) || role == "combobox" {
                if e.has(flag::SECRET) {
                    if e.has(flag::FILLED) {
                        text.push_str(": [filled]");
                    }
                } else {
                    let value = clip(&e.value, MAX_NAME_CHARS);
                    shortened |= clipped(&e.value, MAX_NAME_CHARS);
                    if !value.is_empty() {
                        text.push_str(&format!(": {}", quote(&value)));
                    }
                }
            }
            if role == "Iframe" && e.child_frame.is_none() {
                text.push_str(" [cross-site frame: not included]");
            }
            self.out.push(Line {
                depth,
                text,
                control,
                has_ref: num.is_some(),
                role: shown_role,
                name: full,
                num,
                level: e.level,
                shortened,
            });
            child_depth = depth + 1;
        }
        let parent = shown_name.filter(|n| !n.is_empty()).unwrap_or_else(|| parent_name.to_string());
        for &c in &item.children {
            self.node(doc, c, child_depth, &parent);
        }
        if let Some(cf) = e.child_frame.as_deref().filter(|_| !ignored) {
            self.frame(cf, child_depth);
        }
    }
}

fn quote(t: &str) -> String {
    serde_json::to_string(t).unwrap_or_default()
}

/// The states shown after the name, appended to `out`: `[checked]`, `[disabled]`,
/// `[expanded]`, `[level=2]`, …
fn states(e: &El, out: &mut String) {
    match e.checked.as_deref() {
        Some("true") => out.push_str(" [checked]"),
        Some("mixed") => out.push_str(" [mixed]"),
        Some(_) => out.push_str(" [unchecked]"),
        None => {}
    }
    for (f, label) in [
        (flag::DISABLED, " [disabled]"),
        (flag::FOCUSED, " [focused]"),
        (flag::REQUIRED, " [required]"),
        (flag::SELECTED, " [selected]"),
        (flag::READONLY, " [readonly]"),
    ] {
        if e.has(f) {
            out.push_str(label);
        }
    }
    match e.expanded {
        Some(true) => out.push_str(" [expanded]"),
        Some(false) => out.push_str(" [collapsed]"),
        None => {}
    }
    if e.has(flag::PRESSED) {
        out.push_str(" [pressed]");
    }
    if let Some(l) = e.level {
        out.push_str(&format!(" [level={l}]"));
    }
    if e.has(flag::INVALID) {
        out.push_str(" [invalid]");
    }
}

/// An outline rendered within its budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The lines shown, each ending in a newline.
    pub text: String,
    /// Lines not shown (over the budget).
    pub cut_lines: usize,
    /// Refs on the lines not shown.
    pub cut_refs: usize,
    /// Lines shown whose name, value or text was shortened ([`MAX_NAME_CHARS`]).
    pub shortened: usize,
    /// The index (in the lines given) of the first line not shown, when some were cut: where
    /// `snapshot --from` continues.
    pub next: Option<usize>,
}

/// The outline as text within `max_bytes` (the header line excluded), from line `from` on
/// (an index into `lines`), and what was cut. With `interactive`, only controls, unindented.
pub fn render(lines: &[Line], interactive: bool, max_bytes: usize, from: usize) -> Rendered {
    let mut r = Rendered { text: String::new(), cut_lines: 0, cut_refs: 0, shortened: 0, next: None };
    let shown = |l: &&Line| !interactive || l.control;
    for (i, l) in lines.iter().enumerate().skip(from) {
        if !shown(&l) {
            continue;
        }
        let indent = if interactive { 0 } else { l.depth * 2 };
        let line = format!("{}- {}\n", " ".repeat(indent), l.text);
        if r.text.len() + line.len() > max_bytes {
            let rest = lines[i..].iter().filter(shown);
            r.next = Some(i);
            for l in rest {
                r.cut_lines += 1;
                r.cut_refs += usize::from(l.has_ref);
            }
            return r;
        }
        r.shortened += usize::from(l.shortened);
        r.text.push_str(&line);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A captured page of one frame `F` from a walk answer, each element's `backendNodeId`
    /// its index + 100, and the elements at `clickable` clickable.
    fn captured(nodes: Value, clickable: &[usize]) -> Captured {
        let mut doc = Doc { frame: "F".into(), ..Doc::default() };
        doc.roots = doc.append(&json!({"title": "T", "nodes": nodes}), None);
        for i in 0..doc.items.len() {
            if let Some(e) = doc.el_mut(i) {
                e.backend = Some(i as i64 + 100);
                e.clickable = clickable.contains(&i);
                e.boxed = true;
            }
        }
        let frame = Frame { id: "F".into(), loader: "L".into(), url: "http://a/".into(), targets: vec![], process: 0 };
        Captured { frames: vec![frame], docs: HashMap::from([("F".to_string(), doc)]), signatures: false }
    }

    #[test]
    fn refs_go_to_visible_enabled_controls_and_dom_only_clickables() {
        let (v, d, s, f) = (flag::VISIBLE, flag::DISABLED, flag::SECRET, flag::FILLED);
        let c = captured(
            json!([
                {"p": -1, "t": "HTML", "f": v},
                {"p": 0, "t": "BODY", "f": v},
                {"p": 1, "t": "DIV", "f": v},
                {"p": 2, "t": "BUTTON", "r": "button", "n": "Save", "f": v},
                {"p": 3, "s": "Save"},
                {"p": 2, "t": "BUTTON", "r": "button", "n": "Off", "f": v | d},
                {"p": 2, "t": "DIV", "f": v},
                {"p": 6, "t": "SPAN", "f": v},
                {"p": 7, "s": "Open menu"},
                {"p": 2, "t": "BUTTON", "r": "button", "n": "Zero", "f": v},
                {"p": 2, "t": "INPUT", "r": "textbox", "n": "Password", "f": v | s | f, "k": 1},
                {"p": 2, "t": "INPUT", "r": "checkbox", "n": "Agree", "c": "true", "f": v},
                {"p": 2, "t": "SELECT", "r": "combobox", "n": "Colour", "v": "Red", "x": false, "f": v},
                {"p": 12, "t": "OPTION", "r": "option", "n": "Red", "f": flag::SELECTED},
                {"p": 2, "t": "DIV", "z": 1},
                {"p": 2, "t": "H2", "r": "heading", "n": "Title", "l": 2, "f": v},
                {"p": 2, "t": "DIV", "r": "button", "n": "Ghost", "f": v | flag::IGNORED},
                {"p": 16, "t": "SPAN", "f": v},
                {"p": 17, "s": "shown child"},
                {"p": 2, "t": "INPUT", "r": "textbox", "n": "User", "v": "alice", "f": v | flag::FOCUSED, "k": 1},
            ]),
            // The container at 2 delegates its children's clicks: no ref; the div at 6 is a
            // control only to a click listener.
            &[2, 6],
        );
        // Zero width or height: no box in the DOM snapshot.
        let mut c = c;
        c.docs.get_mut("F").unwrap().el_mut(9).unwrap().boxed = false;
        let mut next = 0;
        let lines = outline(&c, &mut |_, _| {
            next += 1;
            Some(next)
        });
        let Rendered { text, cut_lines: cut, .. } = render(&lines, false, DEFAULT_MAX_BYTES, 0);
        assert_eq!(
            text,
            "- button \"Save\" [ref=e1]\n\
             - button \"Off\" [disabled]\n\
             - clickable \"Open menu\" [ref=e2]\n\
             - button \"Zero\"\n\
             - textbox \"Password\" [ref=e3]: [filled]\n\
             - checkbox \"Agree\" [checked] [ref=e4]\n\
             - combobox \"Colour\" [collapsed] [ref=e5]: \"Red\"\n  \
               - option \"Red\" [selected]\n\
             - heading \"Title\" [level=2]\n\
             - text: \"shown child\"\n\
             - textbox \"User\" [focused] [ref=e6]: \"alice\"\n"
        );
        assert_eq!(cut, 0);
        let r = render(&lines, true, 60, 0);
        assert_eq!(r.text, "- button \"Save\" [ref=e1]\n- button \"Off\" [disabled]\n");
        assert_eq!((r.cut_lines, r.cut_refs), (7, 5));
        // Continued from where it stopped: the rest, once.
        let rest = render(&lines, true, DEFAULT_MAX_BYTES, r.next.unwrap());
        assert!(rest.text.starts_with("- clickable \"Open menu\" [ref=e2]\n"), "{}", rest.text);
        assert_eq!((rest.cut_lines, rest.next), (0, None));
        assert_eq!(c.title(), "T");
        // One element and what it holds.
        let one = outline_of(&c, "F", 112, &mut |_, _| Some(9)).unwrap();
        assert_eq!(one.len(), 2);
        assert_eq!(one[0].text, "combobox \"Colour\" [collapsed] [ref=e9]: \"Red\"");
        assert!(outline_of(&c, "F", 114, &mut |_, _| Some(9)).is_none(), "not rendered");
    }

    #[test]
    fn a_cover_is_named_by_role_and_name_with_its_first_refs() {
        let v = flag::VISIBLE;
        let c = captured(
            json!([
                {"p": -1, "t": "HTML", "f": v},
                {"p": 0, "t": "DIV", "r": "dialog", "n": "Cookie consent", "f": v},
                {"p": 1, "t": "P", "r": "paragraph", "f": v},
                {"p": 2, "s": "We use cookies."},
                {"p": 1, "t": "BUTTON", "r": "button", "n": "Reject all", "f": v},
                {"p": 1, "t": "BUTTON", "r": "button", "n": "Accept all", "f": v},
                {"p": 0, "t": "DIV", "f": v},
                {"p": 6, "s": "Cookie banner"},
            ]),
            &[],
        );
        let mut mint = |_: &str, b: i64| Some(b as u64);
        let (by, refs) = cover_of(&c, "F", 101, 3, &mut mint).unwrap();
        assert_eq!(by.as_deref(), Some("dialog \"Cookie consent\""));
        assert_eq!(
            refs,
            [
                ("button \"Reject all\"".to_string(), "e104".to_string()),
                ("button \"Accept all\"".into(), "e105".into())
            ]
        );
        assert_eq!(cover_of(&c, "F", 101, 1, &mut mint).unwrap().1.len(), 1, "at most max");
        // No role: not named by the outline (the caller keeps its tag and text), no refs.
        assert_eq!(cover_of(&c, "F", 106, 3, &mut mint), Some((None, vec![])));
    }

    #[test]
    fn long_texts_are_shortened_at_the_limit_and_counted_and_kept_whole_for_find() {
        let v = flag::VISIBLE;
        let long = "a ".repeat(400) + "end";
        let c = captured(
            json!([
                {"p": -1, "t": "HTML", "f": v},
                {"p": 0, "t": "P", "r": "paragraph", "f": v},
                {"p": 1, "s": long},
                {"p": 0, "t": "P", "r": "paragraph", "f": v},
                {"p": 3, "s": "short"},
            ]),
            &[],
        );
        let lines = outline(&c, &mut |_, _| None);
        let text = &lines[1];
        assert!(text.shortened && text.name.ends_with(" end"), "the whole text is kept: {text:?}");
        assert!(text.text.ends_with("…\""), "{}", text.text);
        assert_eq!(text.text.chars().count(), "text: \"\"".chars().count() + MAX_NAME_CHARS);
        assert!(!lines[3].shortened);
        assert_eq!(render(&lines, false, DEFAULT_MAX_BYTES, 0).shortened, 1);
    }

    #[test]
    fn closed_shadow_hosts_are_shown_not_entered_and_frames_go_in_place() {
        let v = flag::VISIBLE;
        let mut c = captured(
            json!([
                {"p": -1, "t": "HTML", "f": v},
                {"p": 0, "t": "X-LOGIN", "f": v},
                {"p": 0, "t": "IFRAME", "r": "Iframe", "n": "Child", "f": v},
                {"p": 0, "t": "IFRAME", "r": "Iframe", "n": "Gone", "f": v},
            ]),
            &[],
        );
        c.docs.get_mut("F").unwrap().el_mut(1).unwrap().sealed_host = true;
        c.docs.get_mut("F").unwrap().el_mut(1).unwrap().signature = "0badc0de".into();
        c.signatures = true;
        c.docs.get_mut("F").unwrap().el_mut(2).unwrap().child_frame = Some("G".into());
        let mut child = Doc { frame: "G".into(), ..Doc::default() };
        child.roots = child.append(
            &json!({"nodes": [{"p": -1, "t": "HTML", "f": v}, {"p": 0, "t": "A", "r": "link", "n": "In", "f": v}]}),
            None,
        );
        child.el_mut(1).unwrap().backend = Some(7);
        child.el_mut(1).unwrap().boxed = true;
        c.docs.insert("G".into(), child);
        let mut frames = Vec::new();
        let lines = outline(&c, &mut |f, b| {
            frames.push((f.to_string(), b));
            Some(frames.len() as u64)
        });
        let text = render(&lines, false, DEFAULT_MAX_BYTES, 0).text;
        assert_eq!(
            text,
            "- x-login [closed shadow root] [sig=0badc0de] [ref=e1]\n\
             - Iframe \"Child\"\n  \
               - link \"In\" [ref=e2]\n\
             - Iframe \"Gone\" [cross-site frame: not included]\n"
        );
        assert_eq!(frames[1], ("G".to_string(), 7), "the ref names the node of its own frame");
        assert_eq!(frames[0].0, "F", "the closed host's own ref");
    }
}
