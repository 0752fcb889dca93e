//! HTML instrumentation: which bodies are markup, the shim, and the streaming rewriter
//! (lol_html) that places it and removes meta CSP policies without changing any other byte.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use encoding_rs::Encoding;

use super::csp::{rewrite_csp, CspContext};
use hyper::header::{HeaderMap, CONTENT_TYPE};
use lol_html::html_content::ContentType;
use lol_html::send::{HtmlRewriter, Settings};
use lol_html::{AsciiCompatibleEncoding, DocumentContentHandlers, ElementContentHandlers, MemorySettings, Selector};

/// The most memory the rewriter may hold for one body, in bytes: what it buffers grows only
/// with a single tag (its attributes are parsed whole), so only a pathological tag (say, one
/// inflated from a small compressed body) reaches it; the response is then cut off.
pub const MAX_REWRITER_MEMORY_BYTES: usize = 64 << 20;

/// The shim's source with `__APP__` standing for the app origin (a JSON string literal) and
/// `__UPSTREAM__` for the upstream's own origins (a JSON array of strings). It posts only
/// `location`, `title`, `navigating`, `pointerdown`, `open-window`, `blocked` and `key`, each
/// to the app origin (never `*`); nested same-origin documents relay pointerdown/open-window/
/// blocked/key to their parent, which forwards them. It obeys only `history` and `reload` from
/// the app origin. Message shapes: protocol §6.5.
///
/// `title` (top document, after its first `location`): a MutationObserver on the head (where
/// `<title>` lives; `document.title = …` edits or adds it there) posts the title whenever it
/// differs from the last one sent, e.g. an SPA setting it after `pushState`.
///
/// `blocked`: a page that names the upstream by its own origin (`http://localhost:5173/x.js`)
/// reaches it directly, cross-origin from the frame (whose origin is the proxy's), so a module
/// script, a `crossorigin` script, `fetch` or XHR to it fails on CORS unless the dev server
/// allows the proxy origin. The shim sees the failure (the script's `error` event, in the
/// capture phase on `window`; `fetch`'s rejection, not an abort; XHR's `error`) and reports
/// the URL once (at most 16 per document). `fetch` hands back a derived promise, so an
/// unhandled rejection stays unhandled for the page.
///
/// `key`: the app's prefix key (Ctrl plus the configured letter, `prefix`: Ctrl-b by default;
/// the app's `prefix` message changes it live) and the key after it, pressed inside the frame, never
/// reach the app's window. Trusted keydowns only, in the capture phase on `window` (before
/// every element's listeners, and before window listeners added after the shim ran): the
/// prefix and the next non-modifier key are
/// forwarded and swallowed (default prevented, propagation stopped, their keyups swallowed too);
/// modifiers in between are swallowed unforwarded; a blur disarms. The prefix pressed twice is
/// forwarded both times, and the second reaches the page (tmux's send-prefix: a page's own
/// Ctrl-b stays typeable).
///
/// `document.cookie` (every proxied document the shim runs in): the browser never holds the
/// upstream's cookies (the grant's jar does, protocol §6.4), so the shim gives the document a
/// `cookie` property of its own that reads and writes the jar through the grant's
/// `/__porthole/cookie` (synchronous XHR, as `document.cookie` is synchronous; the page's
/// later changes to `XMLHttpRequest` cannot reach it). HttpOnly cookies never come back.
///
/// `navigating` (top proxied document only, like `location`): the parent cannot see a
/// cross-origin frame's navigation start, only its end. Chromium's Navigation API `navigate`
/// event says a cross-document navigation begins (not a download, not same-document); the
/// shim listens first, so it judges one task later whether a page handler cancelled or
/// intercepted it (`intercept` is wrapped to record that). Without the Navigation API
/// (WebKitGTK), `beforeunload` stands in, judged the same way; the shim never sets
/// `returnValue` (that could prompt). A navigation that never leaves the page (a download, a
/// prompt answered "stay") is ended by the app's bound, the next `location` or the frame's load.
///
/// New windows (protocol §6.5): a link, `window.open` or form target asks the app only when
/// it is `_blank` or a name no frame in reach has; so does a link opened with Ctrl/Cmd/Shift
/// or the middle button. Link clicks are judged after the page's own handlers (bubble phase
/// on `window`): a click the page cancelled (say, to call `window.open` itself) opens
/// nothing more (`newWin`: searched from the topmost
/// same-origin ancestor down, by window name and, for cross-origin children, by the frame
/// element's `name`); a named frame in reach and `_self`/`_parent`/`_top` are left to the
/// browser. A GET form aimed at a new window is turned into its URL (the app asks); a POST
/// form cannot be replayed in a new pane, so it is submitted in its own frame (its target
/// set to `_self` for that submission only). Must not contain `]]>` (XHTML wraps it in CDATA).
const SHIM_TEMPLATE: &str = r#"(function(){var A=__APP__,U=__UPSTREAM__,W=window,P=W.parent,S=location.origin;if(P===W||W.__porthole_shim)return;W.__porthole_shim=1;var T=true;try{T=P.location.origin!==S}catch(e){}
function post(m){m.porthole="shim";m.v=1;try{P.postMessage(m,T?A:S)}catch(e){}}
var LT=null;function loc(l){if(T){LT=document.title;post({kind:"location",url:location.href,title:LT,loaded:l})}}
function ttl(){if(T&&LT!==null&&document.title!==LT){LT=document.title;post({kind:"title",title:LT})}}
var HD=document.head||document.documentElement;if(T&&HD&&W.MutationObserver)new MutationObserver(ttl).observe(HD,{subtree:true,childList:true,characterData:true});
var BK={},BN=0;function own(u){try{return U.indexOf(new URL(String(u),document.baseURI).origin)>=0}catch(e){return false}}
function blk(u,via){var k=via+" "+u;if(BK[k]||BN>=16)return;BK[k]=1;BN++;post({kind:"blocked",url:String(u),via:via})}
W.addEventListener("error",function(e){var t=e.target;if(t instanceof HTMLScriptElement&&t.src&&(String(t.type).toLowerCase()==="module"||t.crossOrigin!==null)&&own(t.src))blk(t.src,"script")},true);
var FE=W.fetch;if(FE)W.fetch=function(i){var u=null;try{u=i instanceof Request?i.url:new URL(String(i),document.baseURI).href}catch(x){}var p=FE.apply(W,arguments);
return u&&own(u)?p.then(null,function(x){if(!x||x.name!=="AbortError")blk(u,"fetch");throw x}):p};
var XP=XMLHttpRequest.prototype,XO=XP.open,XU=new WeakMap();XP.open=function(m,u){var x=this;try{var h=new URL(String(u),document.baseURI).href;
if(!XU.has(x))x.addEventListener("error",function(){var v=XU.get(x);if(v)blk(v,"xhr")});XU.set(x,own(h)?h:"")}catch(e){}return XO.apply(x,arguments)};
var XC=XMLHttpRequest,XS=XP.send,XH=XP.setRequestHeader,CK=__COOKIE__;function ck(m,b){var x=new XC();XO.call(x,m,CK+"?p="+encodeURIComponent(location.pathname),false);XH.call(x,"X-Porthole-Cookie","1");XS.call(x,b);return x}
try{Object.defineProperty(document,"cookie",{configurable:true,enumerable:true,get:function(){try{var x=ck("GET",null);return x.status===200?x.responseText:""}catch(e){return""}},set:function(v){try{ck("POST",String(v))}catch(e){}}})}catch(e){}
var PK=__PREFIX__,KA=0,KU={},KM={Shift:1,Control:1,Alt:1,Meta:1,AltGraph:1,CapsLock:1,Dead:1,Compose:1};function eat(e){e.preventDefault();e.stopImmediatePropagation()}
function keyM(k,c,a,m,s){post({kind:"key",key:k,ctrl:c,alt:a,meta:m,shift:s})}
W.addEventListener("keydown",function(e){if(!e.isTrusted||e.isComposing)return;var k=String(e.key),pre=e.ctrlKey&&!e.altKey&&!e.metaKey&&k.toLowerCase()===PK;
if(!KA){if(!pre)return;KA=1}else if(KM[k]){eat(e);return}else{KA=0;if(pre){keyM(k,e.ctrlKey,e.altKey,e.metaKey,e.shiftKey);return}}
eat(e);KU[e.code]=1;keyM(k,e.ctrlKey,e.altKey,e.metaKey,e.shiftKey)},true);
W.addEventListener("keyup",function(e){if(KU[e.code]){delete KU[e.code];eat(e)}},true);W.addEventListener("blur",function(){KA=0});
function openW(u,s){try{var m={kind:"open-window",url:new URL(String(u),location.href).href};if(s)m.script=true;post(m)}catch(e){}}
function at(el,n){return Element.prototype.getAttribute.call(el,n)}
function root(){var w=W;for(;;){var p=w.parent;if(p===w)return w;try{if(p.location.origin!==S)return w}catch(e){return w}w=p}}
function named(n,w){try{if(w.name===n)return true;var f=w.document.querySelectorAll("iframe,frame,object");for(var i=0;i<f.length;i++){var c=f[i].contentWindow;if(!c)continue;try{c.document}catch(e){if(at(f[i],"name")===n)return true;continue}if(named(n,c))return true}}catch(e){}return false}
function newWin(t){if(!t)return false;var k=t.toLowerCase();if(k==="_self"||k==="_parent"||k==="_top")return false;return k==="_blank"||!named(t,root())}
function tgt(el,a){var t=at(el,a);if(t!=null)return t;var b=document.querySelector("base[target]");return b?at(b,"target"):""}
function formNav(f,s){var st=s?at(s,"formtarget"):null;if(!newWin(st!=null?st:tgt(f,"target")))return null;
var m=((s?at(s,"formmethod"):null)||at(f,"method")||"get").toLowerCase();if(m==="dialog")return null;if(m==="post")return{get:false};
var a=(s?at(s,"formaction"):null)||at(f,"action")||"",u=a?new URL(a,document.baseURI):new URL(location.href),q=new URLSearchParams(),d;
try{d=new FormData(f,s)}catch(e){d=new FormData(f)}d.forEach(function(v,k){q.append(k,typeof v==="string"?v:v.name)});u.search="?"+q;return{get:true,url:u.href}}
function inFrame(f,s){var SA=Element.prototype.setAttribute,RA=Element.prototype.removeAttribute,ft=at(f,"target"),st=s?at(s,"formtarget"):null;SA.call(f,"target","_self");if(st!=null)SA.call(s,"formtarget","_self");
return function(){if(ft==null)RA.call(f,"target");else SA.call(f,"target",ft);if(st!=null)SA.call(s,"formtarget",st)}}
document.addEventListener("DOMContentLoaded",function(){loc(true)});W.addEventListener("pageshow",function(){loc(true)});
W.addEventListener("popstate",function(){loc(false)});W.addEventListener("hashchange",function(){loc(false)});
["pushState","replaceState"].forEach(function(k){var f=history[k];history[k]=function(){var r=f.apply(this,arguments);loc(false);return r}});
W.addEventListener("pointerdown",function(){post({kind:"pointerdown"})},true);
function leaving(e,no){if(T)setTimeout(function(){if(!e.defaultPrevented&&!no())post({kind:"navigating"})},0)}
var NV=W.navigation,NE=W.NavigateEvent;if(NV&&NE&&NV.addEventListener){var I=new WeakSet(),NI=NE.prototype.intercept;if(NI)NE.prototype.intercept=function(){I.add(this);return NI.apply(this,arguments)};
NV.addEventListener("navigate",function(e){if(e.destination.sameDocument||e.hashChange||e.downloadRequest!=null)return;leaving(e,function(){return I.has(e)})})}
else W.addEventListener("beforeunload",function(e){leaving(e,function(){return !!e.returnValue})});
function onLink(e,aux){if(e.defaultPrevented)return;var t=e.target,a=t&&t.closest?t.closest("a[href],area[href]"):null;if(!a||a.hasAttribute("download"))return;
if(!(aux?e.button===1:e.button===0&&(e.ctrlKey||e.metaKey||e.shiftKey||newWin(tgt(a,"target")))))return;e.preventDefault();openW(a.href)}
W.addEventListener("click",function(e){onLink(e,false)});W.addEventListener("auxclick",function(e){onLink(e,true)});
W.addEventListener("submit",function(e){var f=e.target;if(e.defaultPrevented||!(f instanceof HTMLFormElement))return;var s=e.submitter||null,d;try{d=formNav(f,s)}catch(x){return}if(!d)return;
if(d.get){e.preventDefault();openW(d.url)}else setTimeout(inFrame(f,s),0)});
var FS=HTMLFormElement.prototype.submit;HTMLFormElement.prototype.submit=function(){var d=null;try{d=formNav(this,null)}catch(x){}if(!d)return FS.call(this);if(d.get)return openW(d.url);var r=inFrame(this,null);try{return FS.call(this)}finally{r()}};
var O=W.open;W.open=function(u,n){var t=n==null?"":String(n);if(t!==""&&!newWin(t))return O.apply(W,arguments);if(u!=null&&String(u)!=="")openW(u,1);return null};
W.addEventListener("message",function(e){var d=e.data;if(!d||typeof d!=="object")return;
if(T&&e.source===P&&e.origin===A&&d.porthole==="app"&&d.v===1){if(d.kind==="history"&&(d.delta===-1||d.delta===1))history.go(d.delta);else if(d.kind==="reload")location.reload();
else if(d.kind==="prefix"&&typeof d.letter==="string"&&/^[a-z]$/.test(d.letter)){PK=d.letter;KA=0}return}
if(e.origin===S&&d.porthole==="shim"&&d.v===1&&e.source&&e.source!==W){try{if(e.source.parent!==W)return}catch(x){return}if(d.kind==="pointerdown")post({kind:"pointerdown"});else if(d.kind==="open-window"&&typeof d.url==="string")openW(d.url,d.script===true);
else if(d.kind==="blocked"&&typeof d.url==="string"&&(d.via==="script"||d.via==="fetch"||d.via==="xhr"))blk(d.url,d.via);
else if(d.kind==="key"&&typeof d.key==="string")keyM(d.key,d.ctrl===true,d.alt===true,d.meta===true,d.shift===true)}})})();"#;

/// The `<script>` element the proxy injects, parameterized with the app origin (the first
/// entry of the validated embedder chain) and the upstream's own origins
/// ([`super::target::Upstream::own_origins`]), escaped so they cannot end the script early. For
/// XHTML (`xhtml`), the source is wrapped in `//<![CDATA[ … //]]>` so the XML parser reads
/// its `&&` and `<` as text.
pub fn shim_script(app_origin: &str, upstream_origins: &[String], xhtml: bool, prefix: char) -> String {
    let prefix = if prefix.is_ascii_lowercase() { prefix } else { 'b' };
    let src = SHIM_TEMPLATE
        .replace("__PREFIX__", &js_literal(&serde_json::json!(prefix.to_string())))
        .replace("__COOKIE__", &js_literal(&serde_json::json!(super::cookies::SCRIPT_COOKIE_PATH)))
        .replace("__APP__", &js_literal(&serde_json::json!(app_origin)))
        .replace("__UPSTREAM__", &js_literal(&serde_json::json!(upstream_origins)));
    if xhtml {
        format!("<script>//<![CDATA[\n{src}\n//]]></script>")
    } else {
        format!("<script>{src}</script>")
    }
}

/// `shim` (from [`shim_script`]) carrying `nonce` (base64, from `csp::new_nonce`), so the
/// page's kept CSP, which lists that nonce (`csp::rewrite_csp`), lets it run.
pub fn with_nonce(shim: &str, nonce: &str) -> String {
    match shim.strip_prefix("<script>") {
        Some(rest) => format!("<script nonce=\"{nonce}\">{rest}"),
        None => shim.to_string(),
    }
}

/// `value` as a JavaScript literal (JSON) that is safe inside a `<script>` element: only
/// ASCII goes into a body (the rewriter encodes as windows-1252), and nothing that could end
/// the script: `<`, `>`, `&` and every non-ASCII character become `\uXXXX`.
fn js_literal(value: &serde_json::Value) -> String {
    let mut lit = String::new();
    for c in value.to_string().chars() {
        if c.is_ascii() && !matches!(c, '<' | '>' | '&') {
            lit.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                lit += &format!("\\u{unit:04x}");
            }
        }
    }
    lit
}

/// What kind of markup a body is.
#[derive(Debug, Clone, Copy)]
pub struct Markup {
    /// The `Content-Type` `charset`, if it names an encoding (the body's own byte-order mark
    /// still wins, [`super::charset::sniff`]).
    pub charset: Option<&'static Encoding>,
    /// True if and only if it is `application/xhtml+xml` (parsed by the browser as XML).
    pub xhtml: bool,
}

/// Returns how the body is parsed if the response headers say it is `text/html` or
/// `application/xhtml+xml`, else `None`. Whether it may be rewritten also depends on its
/// content codings ([`super::decode::codings`]) and on its encoding, sniffed from its first
/// bytes ([`super::charset::sniff`]).
pub fn markup(h: &HeaderMap) -> Option<Markup> {
    let ct = h.get(CONTENT_TYPE)?.to_str().ok()?;
    let mut parts = ct.split(';');
    let mime = parts.next()?.trim().to_ascii_lowercase();
    if mime != "text/html" && mime != "application/xhtml+xml" {
        return None;
    }
    let charset = parts
        .filter_map(|p| p.split_once('='))
        .filter(|(k, _)| k.trim().eq_ignore_ascii_case("charset"))
        .find_map(|(_, v)| Encoding::for_label(v.trim().trim_matches('"').as_bytes()));
    Some(Markup { charset, xhtml: mime == "application/xhtml+xml" })
}

const UTF8_BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// Where the rewriter writes.
type Sink = Box<dyn FnMut(&[u8]) + Send>;

/// Output of the rewriter between writes.
type Out = Arc<Mutex<Vec<u8>>>;

/// A streaming instrumenter for one HTML body: feed chunks with [`Instrumenter::write`], each
/// returning the bytes ready to send; [`Instrumenter::end`] returns the rest. Never buffers
/// the whole body.
///
/// Byte-transparent: the body is handed to lol_html as windows-1252, whose 256 byte values
/// each decode to one character and encode back to the same byte (WHATWG Encoding), so every
/// byte it does not rewrite comes out as it went in, whatever the body's real encoding. That
/// is sound for every ASCII-compatible encoding: in all of them the bytes the tokenizer acts
/// on (`<`, `>`, `/`, `!`, `?`, `-`, `=`, quotes, ASCII whitespace) never occur inside a
/// multi-byte character, and a letter only after a lead byte ≥ 0x80, so tags are found where
/// the browser finds them. The caller passes on untouched the bodies that are not
/// ASCII-compatible ([`super::charset::Sniffed::ascii_compatible`]).
pub struct Instrumenter {
    rewriter: HtmlRewriter<'static, Sink>,
    out: Out,
    /// The body's first bytes until three are known (a UTF-8 BOM is passed on ahead of the
    /// rewriter, so nothing can be placed before it); `None` once decided.
    prefix: Option<Vec<u8>>,
}

impl Instrumenter {
    /// An instrumenter injecting `shim` (a whole `<script>` element, ASCII only). `meta_csp`:
    /// how a `<meta http-equiv=content-security-policy>` policy is rewritten for the proxy
    /// (`csp.rs`; one left empty removes the element); `None`: left exactly as it is (the
    /// upstream opted in with `X-Porthole-Preserve-CSP`). In XHTML
    /// nothing may follow the root element: with no earlier place found, the shim goes before
    /// `</html>`, and if that is never seen it is left out (the page shows as uninstrumented)
    /// rather than appended after the root, which would make the document ill-formed.
    pub fn new(shim: String, markup: Markup, meta_csp: Option<Arc<CspContext>>) -> Self {
        let out: Out = Arc::new(Mutex::new(Vec::new()));
        let sink_out = out.clone();
        let sink: Sink = Box::new(move |b: &[u8]| {
            sink_out.lock().unwrap_or_else(|p| p.into_inner()).extend_from_slice(b);
        });
        let done = Arc::new(AtomicBool::new(false));
        let in_head = Arc::new(AtomicBool::new(false));
        let shim = Arc::new(shim);
        let sel = |s: &str| -> std::borrow::Cow<'static, Selector> {
            std::borrow::Cow::Owned(s.parse().unwrap_or_else(|e| panic!("bad built-in selector {s}: {e}")))
        };

        let mut element_content_handlers = Vec::new();
        if let Some(cx) = meta_csp {
            element_content_handlers.push((
                sel("meta[http-equiv]"),
                ElementContentHandlers::default().element(move |el: &mut lol_html::send::Element<'_, '_>| {
                    let v = el.get_attribute("http-equiv").unwrap_or_default();
                    if v.trim().eq_ignore_ascii_case("content-security-policy") {
                        match el.get_attribute("content").and_then(|c| rewrite_csp(&c, &cx)) {
                            Some(c) => el.set_attribute("content", &c)?,
                            None => el.remove(),
                        }
                    }
                    Ok(())
                }),
            ));
        }
        // Every element: `<head>` opens the head; `</head>` is the first choice; `<body…>` the
        // second; any other element outside the head that is not a leading html/head/meta-
        // charset tag marks the end of the document's leading part.
        let (d, h, s) = (done.clone(), in_head.clone(), shim.clone());
        element_content_handlers.push((
            sel("*"),
            ElementContentHandlers::default().element(move |el: &mut lol_html::send::Element<'_, '_>| {
                if d.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let name = el.tag_name();
                match name.as_str() {
                    "html" => {
                        // Last place inside the root: before `</html>`.
                        let (d2, s2) = (d.clone(), s.clone());
                        let _ = el.on_end_tag(Box::new(move |end: &mut lol_html::html_content::EndTag<'_>| {
                            if !d2.swap(true, Ordering::Relaxed) {
                                end.before(&s2, ContentType::Html);
                            }
                            Ok(())
                        }));
                    }
                    "head" => {
                        h.store(true, Ordering::Relaxed);
                        let (d2, h2, s2) = (d.clone(), h.clone(), s.clone());
                        let _ = el.on_end_tag(Box::new(move |end: &mut lol_html::html_content::EndTag<'_>| {
                            h2.store(false, Ordering::Relaxed);
                            if !d2.swap(true, Ordering::Relaxed) {
                                end.before(&s2, ContentType::Html);
                            }
                            Ok(())
                        }));
                    }
                    "body" => {
                        h.store(false, Ordering::Relaxed);
                        if !d.swap(true, Ordering::Relaxed) {
                            el.prepend(&s, ContentType::Html);
                        }
                    }
                    "meta" if el.has_attribute("charset") => {}
                    _ if h.load(Ordering::Relaxed) => {}
                    _ => {
                        if !d.swap(true, Ordering::Relaxed) {
                            el.before(&s, ContentType::Html);
                        }
                    }
                }
                Ok(())
            }),
        ));
        // Text outside the head that is not ASCII whitespace also ends the leading part (the
        // HTML parser's "before head" and "in head" modes ignore only those).
        let (d, h, s) = (done.clone(), in_head.clone(), shim.clone());
        let text = move |t: &mut lol_html::html_content::TextChunk<'_>| {
            if d.load(Ordering::Relaxed) || h.load(Ordering::Relaxed) {
                return Ok(());
            }
            let content = t.as_str().chars().any(|c| !matches!(c, '\t' | '\n' | '\x0C' | '\r' | ' '));
            if content && !d.swap(true, Ordering::Relaxed) {
                t.before(&s, ContentType::Html);
            }
            Ok(())
        };
        let (d, s) = (done.clone(), shim.clone());
        let xhtml = markup.xhtml;
        let end = move |e: &mut lol_html::html_content::DocumentEnd<'_>| {
            if !d.swap(true, Ordering::Relaxed) && !xhtml {
                e.append(&s, ContentType::Html);
            }
            Ok(())
        };
        let mut settings = Settings::new_send();
        settings.element_content_handlers = element_content_handlers;
        settings.document_content_handlers = vec![DocumentContentHandlers::default().text(text).end(end)];
        settings.encoding =
            AsciiCompatibleEncoding::new(encoding_rs::WINDOWS_1252).expect("windows-1252 is ASCII-compatible");
        settings.memory_settings =
            MemorySettings { max_allowed_memory_usage: MAX_REWRITER_MEMORY_BYTES, ..MemorySettings::default() };
        let rewriter = HtmlRewriter::new(settings, sink);
        Instrumenter { rewriter, out, prefix: Some(Vec::new()) }
    }

    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.out.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Feeds one chunk; returns the output ready so far (possibly empty).
    pub fn write(&mut self, chunk: &[u8]) -> Result<Vec<u8>, lol_html::errors::RewritingError> {
        let mut lead = Vec::new();
        if let Some(mut p) = self.prefix.take() {
            p.extend_from_slice(chunk);
            if p.len() < UTF8_BOM.len() && UTF8_BOM.starts_with(&p) {
                self.prefix = Some(p);
                return Ok(Vec::new());
            }
            let body = if p.starts_with(UTF8_BOM) {
                lead.extend_from_slice(UTF8_BOM);
                &p[UTF8_BOM.len()..]
            } else {
                &p[..]
            };
            self.rewriter.write(body)?;
        } else {
            self.rewriter.write(chunk)?;
        }
        lead.extend(self.take());
        Ok(lead)
    }

    /// Ends the document; returns the remaining output.
    pub fn end(mut self) -> Result<Vec<u8>, lol_html::errors::RewritingError> {
        let mut lead = Vec::new();
        if let Some(p) = self.prefix.take() {
            self.rewriter.write(&p)?;
            lead = self.take();
        }
        let out = self.out.clone();
        self.rewriter.end()?;
        lead.extend(std::mem::take(&mut *out.lock().unwrap_or_else(|p| p.into_inner())));
        Ok(lead)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    const S: &str = "<script>SHIM</script>";

    fn utf8(xhtml: bool) -> Markup {
        Markup { charset: None, xhtml }
    }

    fn run(chunks: &[&[u8]], keep_meta_csp: bool) -> Vec<u8> {
        run_as(chunks, keep_meta_csp, utf8(false), S)
    }

    fn run_as(chunks: &[&[u8]], keep_meta_csp: bool, markup: Markup, shim: &str) -> Vec<u8> {
        let cx = CspContext {
            upstream_origins: vec!["http://localhost:5173".into()],
            proxy_origins: ["http://127.0.0.1:41000".into(), "http://localhost:41000".into()],
            nonce: "N".into(),
            cookie_path: "/__porthole/cookie",
        };
        let mut i = Instrumenter::new(shim.into(), markup, (!keep_meta_csp).then(|| Arc::new(cx)));
        let mut out = Vec::new();
        for c in chunks {
            out.extend(i.write(c).unwrap());
        }
        out.extend(i.end().unwrap());
        out
    }

    fn html(s: &str) -> String {
        String::from_utf8(run(&[s.as_bytes()], false)).unwrap()
    }

    #[test]
    fn shim_placement() {
        let cases: &[(&str, &str)] = &[
            (
                "<!doctype html><html><head><title>t</title></head><body>x</body></html>",
                "<!doctype html><html><head><title>t</title><script>SHIM</script></head><body>x</body></html>",
            ),
            (
                "<!DOCTYPE html><html><body class=a>x</body></html>",
                "<!DOCTYPE html><html><body class=a><script>SHIM</script>x</body></html>",
            ),
            ("<body>x</body>", "<body><script>SHIM</script>x</body>"),
            ("<meta charset=utf-8><p>x</p>", "<meta charset=utf-8><script>SHIM</script><p>x</p>"),
            (
                "<meta charset=\"utf-8\"><head><title>t</title></head>",
                "<meta charset=\"utf-8\"><head><title>t</title><script>SHIM</script></head>",
            ),
            ("<!doctype html>hello", "<!doctype html><script>SHIM</script>hello"),
            ("<!doctype html>\n<html>\n", "<!doctype html>\n<html>\n<script>SHIM</script>"),
            (
                "<!DOCTYPE HTML><HTML><HEAD><TITLE>t</TITLE></HEAD><BODY>x</BODY></HTML>",
                "<!DOCTYPE HTML><HTML><HEAD><TITLE>t</TITLE><script>SHIM</script></HEAD><BODY>x</BODY></HTML>",
            ),
            (
                "<head><script>var s = \"</head>\";</script></head><body></body>",
                "<head><script>var s = \"</head>\";</script><script>SHIM</script></head><body></body>",
            ),
            ("<html><head><title>t</title><body>x", "<html><head><title>t</title><body><script>SHIM</script>x"),
            ("", "<script>SHIM</script>"),
            // A meta policy is kept, made to work through the proxy (csp.rs); one with only a
            // frame-ancestors (which a meta policy cannot set anyway) goes.
            (
                "<head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"></head>",
                "<head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'nonce-N' http://127.0.0.1:41000/__porthole/cookie\"><script>SHIM</script></head>",
            ),
            (
                "<head><meta http-equiv=\"content-security-policy\" content=\"frame-ancestors 'none'\"></head>",
                "<head><script>SHIM</script></head>",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(html(input), *want, "input {input:?}");
        }
    }

    #[test]
    fn xhtml_placement_stays_inside_the_root() {
        let x = |input: &str| String::from_utf8(run_as(&[input.as_bytes()], false, utf8(true), S)).unwrap();
        let root = "<html xmlns=\"http://www.w3.org/1999/xhtml\">";
        let cases: &[(String, String)] = &[
            (
                format!("<?xml version=\"1.0\"?>\n{root}<head><title>t</title></head><body/></html>"),
                format!(
                    "<?xml version=\"1.0\"?>\n{root}<head><title>t</title><script>SHIM</script></head><body/></html>"
                ),
            ),
            (format!("{root}<p>x</p></html>"), format!("{root}<script>SHIM</script><p>x</p></html>")),
            (format!("{root}\n</html>\n"), format!("{root}\n<script>SHIM</script></html>\n")),
            // `<script/>` is a start tag to an HTML tokenizer: the rest reads as script text,
            // so no place is found; nothing may follow the root, so nothing is injected.
            (
                format!("{root}<head><script src=\"a.js\"/></head></html>"),
                format!("{root}<head><script src=\"a.js\"/></head></html>"),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(x(input), *want, "input {input:?}");
        }
        // HTML still gets the shim at the end when nothing else came.
        assert_eq!(html("<!-- only a comment -->"), "<!-- only a comment --><script>SHIM</script>");
    }

    #[test]
    fn xhtml_shim_is_character_data() {
        let s = shim_script("http://127.0.0.1:4000", &[], true, 'b');
        let body = s.strip_prefix("<script>//<![CDATA[\n").and_then(|b| b.strip_suffix("\n//]]></script>")).expect(&s);
        assert!(!body.contains("]]>"), "the CDATA section must not end early");
        assert!(body.contains("&&") && body.contains('<'), "the source needs the CDATA wrapper");
        let html = shim_script("http://127.0.0.1:4000", &[], false, 'b');
        assert_eq!(html, format!("<script>{body}</script>"), "same source, unwrapped for HTML");
        let out = String::from_utf8(run_as(
            &[b"<html xmlns=\"http://www.w3.org/1999/xhtml\"><head></head><body/></html>"],
            false,
            utf8(true),
            &s,
        ))
        .unwrap();
        assert_eq!(out, format!("<html xmlns=\"http://www.w3.org/1999/xhtml\"><head>{s}</head><body/></html>"));
    }

    #[test]
    fn leading_bom_stays_first() {
        let mut input = vec![0xEF, 0xBB, 0xBF];
        input.extend_from_slice(b"<!doctype html><p>x");
        let out = run(&[&input], false);
        assert!(out.starts_with(&[0xEF, 0xBB, 0xBF]), "{out:?}");
        assert_eq!(&out[3..], b"<!doctype html><script>SHIM</script><p>x");
        let mut input = vec![0xEF, 0xBB, 0xBF];
        input.extend_from_slice(b"hello");
        let out = run(&[&input[..1], &input[1..2], &input[2..]], false);
        assert_eq!(&out[..], b"\xEF\xBB\xBF<script>SHIM</script>hello");
        assert_eq!(run(&[b"<"], false), b"<script>SHIM</script><");
    }

    #[test]
    fn head_end_split_across_chunks() {
        let out = run(&[b"<!doctype html><html><he", b"ad><title>t</ti", b"tle></he", b"ad><body>x</body>"], false);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "<!doctype html><html><head><title>t</title><script>SHIM</script></head><body>x</body>"
        );
    }

    #[test]
    fn meta_csp_kept_when_preserved() {
        let input = "<head><meta http-equiv=content-security-policy content=\"x\"></head>";
        let out = String::from_utf8(run(&[input.as_bytes()], true)).unwrap();
        assert_eq!(out, "<head><meta http-equiv=content-security-policy content=\"x\"><script>SHIM</script></head>");
    }

    #[test]
    fn which_bodies_are_markup() {
        use encoding_rs::{SHIFT_JIS, UTF_16LE, UTF_8, WINDOWS_1252};
        /// (Content-Type, what `markup` says: xhtml and charset)
        type Case<'a> = (Option<&'a str>, Option<(bool, Option<&'static Encoding>)>);
        let cases: &[Case] = &[
            (Some("text/html"), Some((false, None))),
            (Some("text/html; charset=utf-8"), Some((false, Some(UTF_8)))),
            (Some("TEXT/HTML; Charset=\"ISO-8859-1\""), Some((false, Some(WINDOWS_1252)))),
            (Some("text/html; charset=shift_jis"), Some((false, Some(SHIFT_JIS)))),
            (Some("text/html; charset=UTF-16LE"), Some((false, Some(UTF_16LE)))),
            (Some("text/html; charset=nonsense"), Some((false, None))),
            (Some("application/xhtml+xml"), Some((true, None))),
            (Some("Application/XHTML+XML; charset=utf-8"), Some((true, Some(UTF_8)))),
            (Some("text/plain"), None),
            (Some("application/json"), None),
            (None, None),
        ];
        for (ct, want) in cases {
            let mut h = HeaderMap::new();
            if let Some(ct) = ct {
                h.insert(CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
            }
            assert_eq!(markup(&h).map(|m| (m.xhtml, m.charset)), *want, "{ct:?}");
        }
    }

    #[test]
    fn every_byte_value_passes_through_unchanged() {
        let all: Vec<u8> = (0..=255u8).filter(|b| !b"<>&\"'".contains(b)).collect();
        let mut input = b"<!doctype html><html><head><title>".to_vec();
        input.extend(&all);
        input.extend(b"</title><meta name=x content=\"");
        input.extend(&all);
        input.extend(b"\"></head><body><!-- ");
        input.extend(&all);
        input.extend(b" --><p>");
        input.extend(&all);
        input.extend(b"</p><script>");
        input.extend(&all);
        input.extend(b"</script></body></html>");
        let at = input.windows(7).position(|w| w == b"</head>").unwrap();
        let want = [&input[..at], S.as_bytes(), &input[at..]].concat();
        // Split at every byte, so no chunk boundary is special.
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&chunks, false).escape_ascii().to_string(), want.escape_ascii().to_string());
        assert_eq!(run(&[&input], false), want);
    }

    #[test]
    fn a_tag_past_the_memory_bound_is_an_error() {
        let mut i = Instrumenter::new(S.into(), utf8(false), None);
        i.write(b"<!doctype html><p title=\"").unwrap();
        let block = vec![b'a'; 1 << 20];
        let failed = (0..(MAX_REWRITER_MEMORY_BYTES >> 20) + 8).any(|_| i.write(&block).is_err());
        assert!(failed, "the rewriter buffered a tag past {MAX_REWRITER_MEMORY_BYTES} bytes");
    }

    #[test]
    fn shim_literal_is_escaped_and_targets_the_app_origin() {
        let s = shim_script("http://127.0.0.1:4000", &[], false, 'b');
        assert!(s.starts_with("<script>") && s.ends_with("</script>"));
        assert!(s.contains("var A=\"http://127.0.0.1:4000\""));
        assert!(!s.contains("\"*\""), "never targets *");
        assert!(!s.contains("returnValue="), "never asks for a beforeunload prompt");
        let evil = shim_script("</script><script>alert(1)//", &["http://x</script>".into()], false, 'b');
        assert_eq!(evil.matches("</script>").count(), 1);
        let wide = shim_script("tauri://\u{e9}\u{2028}\u{1F600}", &[], false, 'b');
        assert!(wide.is_ascii(), "only ASCII is injected");
        assert!(wide.contains(r#"var A="tauri://\u00e9\u2028\ud83d\ude00""#), "{wide}");
        let up = shim_script(
            "http://127.0.0.1:4000",
            &["http://localhost:5173".into(), "http://[::1]:5173".into()],
            false,
            'b',
        );
        assert!(up.contains(r#"U=["http://localhost:5173","http://[::1]:5173"]"#), "{up}");
    }
}
