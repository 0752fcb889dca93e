//! Project layouts end to end (DESIGN §14, protocol §9.8): the real `ph up` inside a real
//! pane of the real sidecar, a test window on the UI channel standing in for the UI, and a
//! real `.porthole.toml` in a temporary project directory.

mod common;

use common::control::{run_in, shell};
use common::window::TestWindow;
use common::{temp_dir, Sidecar};
use serde_json::{json, Value};

/// The lines after the last one starting with `marker` (the output of the command that printed it).
fn after<'a>(screen: &'a str, marker: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = screen.lines().collect();
    let start = lines.iter().rposition(|l| l.contains(marker)).unwrap_or(0);
    lines[start..].to_vec()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn terminal_count(sc: &Sidecar) -> usize {
    sc.req("GET", "/api/terminals", None).await.json()["terminals"].as_array().unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ph_up_refuses_an_untrusted_file_then_starts_and_reuses_the_layout() {
    let sc = Sidecar::start_with_env(&[], &[("SHELL", "/bin/bash")]);
    let project = temp_dir("project");
    std::fs::create_dir_all(project.join("site/deep")).unwrap();
    std::fs::write(project.join("site/index.html"), "<h1>layout site</h1>").unwrap();
    let port = free_port();
    let file = project.join(".porthole.toml");
    let text = format!(
        r#"# a test project
[[viewports]]
name = "Phone"
width = 400
height = 700

[[layouts]]
name = "dev"
[[layouts.panes]]
command = ["python3", "-m", "http.server", "{port}", "--bind", "127.0.0.1"]
cwd = "site"
split = "right"
[[layouts.panes]]
command = "sleep 1000"
split = "down"
[[layouts.browsers]]
port = {port}

[[layouts]]
name = "other"
[[layouts.panes]]
command = "sleep 2000"
"#
    );
    std::fs::write(&file, &text).unwrap();
    let file = std::fs::canonicalize(&file).unwrap();
    let t1 = shell(&sc).await;
    let win = TestWindow::attach(&sc, &t1).await;
    let dir = project.join("site/deep");

    // Untrusted: exit 2 with the structured error, nothing started, the window asked.
    let out = run_in(&sc, &t1, &format!("cd {}; ph up dev; echo \"up1 rc=$?\"", dir.display()), "^up1 rc=").await;
    assert!(out.contains("up1 rc=2") && out.contains("[untrusted_project]"), "{out}");
    assert_eq!(win.handles(), [t1.clone()], "nothing was placed");
    assert_eq!(terminal_count(&sc).await, 1, "nothing was started");
    let told = win.told.lock().unwrap().clone();
    let prompt =
        told.iter().find(|m| m["type"] == "project_trust").unwrap_or_else(|| panic!("no trust prompt: {told:?}"));
    assert_eq!(prompt["file"], file.to_string_lossy().as_ref());
    assert_eq!(prompt["layout"], "dev");
    assert_eq!(prompt["layouts"][0]["panes"][1]["command"], json!(["/bin/sh", "-c", "sleep 1000"]), "{prompt}");
    let sha = prompt["sha256"].as_str().unwrap().to_string();
    // --json carries the code, the file and its hash for programs.
    let out = run_in(&sc, &t1, "ph up --json; echo \"up2 rc=$?\"", "^up2 rc=").await;
    let joined = out.replace('\n', ""); // long lines wrap at 120 columns
    assert!(
        out.contains("up2 rc=2") && joined.contains("\"code\":\"untrusted_project\"") && joined.contains(&sha),
        "{out}"
    );

    // A pane token cannot trust the file: only the window's own session can.
    let py = format!(
        "python3 -c 'import json,os,urllib.request as u; r=u.Request(os.environ[\"PORTHOLE_URL\"]+\"api/project/trust\", data=json.dumps({{\"file\":\"{}\",\"sha256\":\"{sha}\"}}).encode(), headers={{\"Authorization\":\"Bearer \"+os.environ[\"PORTHOLE_TOKEN\"],\"Content-Type\":\"application/json\",\"Origin\":os.environ[\"PORTHOLE_URL\"].rstrip(\"/\")}})\ntry: u.urlopen(r); print(\"trust=ok\")\nexcept Exception as e: print(\"trust=%s\" % getattr(e, \"code\", e))'",
        file.display()
    );
    let out = run_in(&sc, &t1, &py, "^trust=").await;
    assert!(out.contains("trust=401"), "{out}");
    let r = sc.req("POST", "/api/project/trust", Some(&json!({"file": file, "sha256": "0".repeat(64)}))).await;
    assert_eq!(r.code(), "project_changed", "the bytes shown must be the bytes trusted");
    let r = sc.req("POST", "/api/project/trust", Some(&json!({"file": file, "sha256": sha}))).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let info = sc.req("GET", &format!("/api/project?terminal={t1}"), None).await.json();
    assert_eq!(info["trusted"], true, "{info}");
    assert_eq!(info["layouts"][1]["layout"], "other");

    // Trusted: the panes start, the browser opens once the server listens.
    let out = run_in(&sc, &t1, "ph up dev; echo \"up3 rc=$?\"", "^up3 rc=").await;
    let lines = after(&out, "ph up dev; echo \"up3");
    assert!(out.contains("up3 rc=0"), "{out}");
    let started: Vec<&&str> = lines.iter().filter(|l| l.starts_with("started")).collect();
    assert_eq!(started.len(), 3, "{out}");
    assert!(lines.iter().any(|l| l.contains("python3 -m http.server") && l.contains("/site)")), "{out}");
    assert!(lines.iter().any(|l| l.contains(&format!("http://localhost:{port}/ (iframe)"))), "{out}");
    assert_eq!(terminal_count(&sc).await, 3);
    let handles = win.handles();
    assert_eq!(handles.len(), 4, "{handles:?}");
    assert_eq!(handles.iter().filter(|h| h.starts_with('b')).count(), 1, "{handles:?}");

    // The browser pane's presets: the project of the terminal serving its port, whose
    // "Phone" replaces the built-in one whole.
    let info = sc.req("GET", &format!("/api/project?port={port}"), None).await.json();
    assert_eq!(info["file"], file.to_string_lossy().as_ref(), "{info}");
    let presets: Vec<(String, u64, f64)> = info["viewports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap().to_string(), v["width"].as_u64().unwrap(), v["dpr"].as_f64().unwrap()))
        .collect();
    assert_eq!(presets.last(), Some(&("Phone".to_string(), 400, 1.0)), "{presets:?}");
    assert_eq!(presets.iter().filter(|p| p.0 == "Phone").count(), 1, "{presets:?}");
    assert!(presets.iter().any(|p| p.0 == "Desktop"), "{presets:?}");
    let none = sc.req("GET", &format!("/api/project?port={}", free_port()), None).await.json();
    assert_eq!(none["file"], Value::Null);

    // Again (the default layout is the first): everything is reused, nothing started.
    let out = run_in(&sc, &t1, "ph up --json > /tmp/up.$$.json; echo \"up4 rc=$?\"; python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(\"reused=\" + \",\".join(str(p[\"reused\"]) for p in d[\"panes\"] + d[\"browsers\"]))' /tmp/up.$$.json", "^reused=").await;
    assert!(out.contains("up4 rc=0") && out.contains("reused=True,True,True"), "{out}");
    assert_eq!(terminal_count(&sc).await, 3);
    assert_eq!(win.handles(), handles, "no pane was added");

    // A name the file lacks is a usage error naming the layouts.
    let out = run_in(&sc, &t1, "ph up prod; echo \"up5 rc=$?\"", "^up5 rc=").await;
    assert!(out.contains("up5 rc=1") && out.contains("[unknown_layout]") && out.contains("dev, other"), "{out}");

    // A changed file has a new hash: asked again, nothing started.
    std::fs::write(project.join(".porthole.toml"), text.replace("sleep 2000", "sleep 3000")).unwrap();
    let out = run_in(&sc, &t1, "ph up other; echo \"up6 rc=$?\"", "^up6 rc=").await;
    assert!(out.contains("up6 rc=2") && out.contains("[untrusted_project]"), "{out}");
    assert_eq!(terminal_count(&sc).await, 3);
    let prompts = win.told.lock().unwrap().iter().filter(|m| m["type"] == "project_trust").count();
    assert_eq!(prompts, 3, "each refused up asks the window");

    // A broken file is refused with its line and column.
    std::fs::write(project.join(".porthole.toml"), "[[layouts]]\nname = \"a\"\n[[layouts.panes]]\ncomand = \"x\"\n")
        .unwrap();
    let r = sc.req("GET", &format!("/api/project?terminal={t1}"), None).await;
    assert_eq!(r.code(), "bad_project");
    assert_eq!((r.json()["error"]["line"].clone(), r.json()["error"]["column"].clone()), (json!(4), json!(1)));
}

#[test]
fn ph_config_default_prints_the_sidecars_default_file_even_outside_porthole() {
    let ph = std::process::Command::new(env!("CARGO_BIN_EXE_ph"))
        .args(["config", "default"])
        .env_remove("PORTHOLE_URL")
        .env_remove("PORTHOLE_TOKEN")
        .output()
        .unwrap();
    let sidecar = std::process::Command::new(env!("CARGO_BIN_EXE_porthole-sidecar"))
        .arg("--print-default-config")
        .output()
        .unwrap();
    assert!(ph.status.success() && sidecar.status.success());
    assert!(String::from_utf8_lossy(&ph.stdout).contains("[font]"), "{}", String::from_utf8_lossy(&ph.stdout));
    assert_eq!(ph.stdout, sidecar.stdout);
}
