//! The viewer socket's contract for what a screencast pane draws itself (issue #11): picker
//! inputs (`popup` kind `input`, `popup_value` checked by type), the file chooser (reported,
//! answered with uploaded files, bounded by `multiple`), downloads (saved to the download
//! directory, reported). Real headless Chromium, pages served by a server this file starts.

mod common;

use std::sync::OnceLock;

use common::browser::{click, create_at, delete, fixed, send, serve, until_json, until_title, view};
use common::{temp_dir, Sidecar};
use serde_json::json;

const ABS: &str = "position:absolute;left:20px;top:20px;width:200px;height:30px;box-sizing:border-box";

fn page(path: &str) -> Option<String> {
    let head = "<!doctype html><style>body{margin:0}</style>";
    Some(match path {
        "/date" => format!(
            r#"{head}<title>date</title><input id=d type=date value="2026-12-01" min="2026-01-01" style="{ABS}"
            onchange="document.title='date:'+this.value">"#
        ),
        "/file" => format!(
            r#"{head}<title>file</title><input id=f type=file accept="image/*" style="{ABS}"
            onchange="document.title='file:'+Array.from(this.files).map(f=>f.name+'='+f.size).join(',')">"#
        ),
        "/download" => format!(
            r#"{head}<title>download</title><a id=a href="/payload" download="data.csv" style="{ABS};display:block">get</a>"#
        ),
        "/payload" => "a,b\n1,2\n".to_string(),
        // Find in page: matches across inline elements and collapsed whitespace, none across
        // blocks or in hidden text; the second match far below the fold. The title reports
        // the page's view of it: highlights registered, scrolled, its own selection.
        "/find" => format!(
            r#"{head}<title>find</title><p>Grüße aus der Straße</p><p>foo<b>bar</b> and  two
            words</p><p>abc</p><p>def</p><p style="display:none">straße hidden</p>
            <div style="height:3000px"></div><p>Die andere STRASSE, die andere Straße</p>
            <script>setInterval(() => document.title = 'hl:' + CSS.highlights.size + ':' + (scrollY > 0) + ':' +
              getSelection().rangeCount, 50)</script>"#
        ),
        _ => return None,
    })
}

fn server() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| serve(page))
}

/// The download directory of this file's sidecar.
fn downloads() -> &'static std::path::Path {
    static D: OnceLock<std::path::PathBuf> = OnceLock::new();
    D.get_or_init(|| temp_dir("downloads"))
}

fn sidecar() -> &'static Sidecar {
    static S: OnceLock<Sidecar> = OnceLock::new();
    S.get_or_init(|| {
        Sidecar::start_with_env(&["--exit-with-parent"], &[("XDG_DOWNLOAD_DIR", downloads().to_str().unwrap())])
    })
}

async fn create(sc: &Sidecar, path: &str) -> String {
    create_at(sc, &format!("{}{path}", server()), fixed(1280, 800, 1.0)).await
}

#[tokio::test]
async fn a_date_input_reports_a_picker_and_takes_only_a_date() {
    let sc = sidecar();
    let id = create(sc, "/date").await;
    let mut ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "date").await;
    click(&mut ws, 200.0, 35.0).await;
    let p = until_json(&mut ws, "popup", |v| v["type"] == "popup").await;
    assert_eq!(p["kind"], "input", "{p}");
    assert_eq!(p["input_type"], "date");
    assert_eq!(p["value"], "2026-12-01");
    assert_eq!(p["min"], "2026-01-01");
    assert_eq!((p["x"].as_f64(), p["y"].as_f64(), p["width"].as_f64()), (Some(20.0), Some(20.0), Some(200.0)));
    // Not a date: refused with an error, the page untouched; a date applies.
    send(&mut ws, json!({"type":"popup_value","value":"13:45"})).await;
    until_json(&mut ws, "error", |v| v["type"] == "error").await;
    send(&mut ws, json!({"type":"popup_value","value":"2026-12-24"})).await;
    assert_eq!(until_title(sc, &id, |t| t.starts_with("date:")).await, "date:2026-12-24");
    delete(sc, &id).await;
}

/// Uploads `bytes` as file `name` for chooser `n` of browser `id`.
async fn upload(sc: &Sidecar, id: &str, n: u64, name: &str, bytes: Vec<u8>) -> common::Resp {
    let auth = sc.bearer();
    sc.raw(
        "POST",
        &format!("/api/browsers/{id}/file-chooser/{n}/files?name={name}"),
        &[("Authorization", &auth), ("Content-Type", "application/octet-stream")],
        &bytes,
    )
    .await
}

#[tokio::test]
async fn a_file_chooser_is_reported_and_answered_with_uploaded_files() {
    let sc = sidecar();
    let id = create(sc, "/file").await;
    let mut ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "file").await;
    click(&mut ws, 100.0, 35.0).await;
    let m = until_json(&mut ws, "file_chooser", |v| v["type"] == "file_chooser" && v["chooser"].is_object()).await;
    let c = &m["chooser"];
    assert_eq!((c["multiple"].as_bool(), c["accept"].as_str()), (Some(false), Some("image/*")), "{m}");
    let n = c["id"].as_u64().unwrap();
    // 300 KiB: over the JSON bound, within the upload bound.
    let a = upload(sc, &id, n, "a.png", vec![1u8; 300 * 1024]).await;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    let b = upload(sc, &id, n, "b.png", vec![2u8; 10]).await;
    let (pa, pb) = (a.json()["path"].as_str().unwrap().to_string(), b.json()["path"].as_str().unwrap().to_string());
    assert!(pa.ends_with("/a.png"), "{pa}");
    // Two files for a single-file input: refused, the chooser stays.
    let two = sc
        .req("POST", &format!("/api/browsers/{id}/file-chooser/{n}"), Some(&json!({"paths": [pa.clone(), pb]})))
        .await;
    assert_eq!(two.status, 400);
    // A wrong chooser id: refused.
    let wrong =
        sc.req("POST", &format!("/api/browsers/{id}/file-chooser/{}", n + 1), Some(&json!({"paths": []}))).await;
    assert_eq!(wrong.status, 400);
    let one = sc.req("POST", &format!("/api/browsers/{id}/file-chooser/{n}"), Some(&json!({"paths": [pa]}))).await;
    assert_eq!(one.status, 200, "{}", String::from_utf8_lossy(&one.body));
    assert_eq!(until_title(sc, &id, |t| t.starts_with("file:")).await, format!("file:a.png={}", 300 * 1024));
    until_json(&mut ws, "chooser gone", |v| v["type"] == "file_chooser" && v["chooser"].is_null()).await;
    // Answered: a late upload for it is refused.
    assert_eq!(upload(sc, &id, n, "c.png", vec![3u8; 10]).await.status, 400);
    delete(sc, &id).await;
}

#[tokio::test]
async fn a_download_is_saved_to_the_download_directory_and_reported() {
    let sc = sidecar();
    let id = create(sc, "/download").await;
    let mut ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "download").await;
    click(&mut ws, 100.0, 35.0).await;
    let m = until_json(&mut ws, "download done", |v| {
        v["type"] == "downloads"
            && v["downloads"].as_array().is_some_and(|d| d.iter().any(|d| d["state"] == "completed"))
    })
    .await;
    let d = &m["downloads"][0];
    assert_eq!((d["name"].as_str(), d["received"].as_u64()), (Some("data.csv"), Some(8)), "{m}");
    let path = std::path::PathBuf::from(d["path"].as_str().unwrap());
    assert_eq!(path, downloads().join("data.csv"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,2\n");
    delete(sc, &id).await;
}

#[tokio::test]
async fn find_in_page_counts_highlights_and_scrolls_to_matches_without_touching_the_selection() {
    let sc = sidecar();
    let id = create(sc, "/find").await;
    let mut ws = view(sc, &id).await;
    until_title(sc, &id, |t| t == "hl:0:false:0").await;
    let find =
        |text: &str, next: bool, backwards: bool| json!({"type":"find","text":text,"next":next,"backwards":backwards});
    // Non-ASCII, any case; the hidden paragraph does not count; the first match is in view.
    send(&mut ws, find("straße", false, false)).await;
    let m =
        until_json(&mut ws, "find", |v| v["type"] == "error" || (v["type"] == "find" && v["text"] == "straße")).await;
    assert_eq!((m["index"].as_u64(), m["count"].as_u64()), (Some(1), Some(2)), "{m}");
    until_title(sc, &id, |t| t == "hl:2:false:0").await;
    // The next match is far below: the page scrolls to it; the page's selection stays empty.
    send(&mut ws, find("straße", true, false)).await;
    let m = until_json(&mut ws, "find", |v| v["type"] == "find" && v["index"] == 2).await;
    assert_eq!(m["count"], 2, "{m}");
    until_title(sc, &id, |t| t == "hl:2:true:0").await;
    // Wrapping forwards, then backwards.
    send(&mut ws, find("straße", true, false)).await;
    until_json(&mut ws, "find", |v| v["type"] == "find" && v["index"] == 1).await;
    send(&mut ws, find("straße", true, true)).await;
    until_json(&mut ws, "find", |v| v["type"] == "find" && v["index"] == 2).await;
    // Inline elements and whitespace runs join; blocks do not; ß is not ss.
    for (text, count) in [("STRASSE", 1), ("foobar", 1), ("and two words", 1), ("abcdef", 0), ("nowhere", 0)] {
        send(&mut ws, find(text, false, false)).await;
        let m = until_json(&mut ws, "find", |v| v["type"] == "find" && v["text"] == text).await;
        assert_eq!(m["count"].as_u64(), Some(count), "{text}: {m}");
    }
    // Closing the bar removes every highlight.
    send(&mut ws, find("foobar", false, false)).await;
    until_title(sc, &id, |t| t.starts_with("hl:2:")).await;
    send(&mut ws, find("", false, false)).await;
    until_json(&mut ws, "find", |v| v["type"] == "find" && v["text"] == "").await;
    until_title(sc, &id, |t| t.starts_with("hl:0:")).await;
    delete(sc, &id).await;
}
