#!/usr/bin/env node
// Desktop smoke test: the real `target/debug/porthole` (or, from the packaging suite, the
// one unpacked from the .deb) under Xvfb, driven through tauri-driver + WebKitWebDriver
// with plain WebDriver HTTP calls.
//
// Proves: without a sidecar the window shows why; with one, the window leaves the
// bundled start page for the sidecar's UI, a terminal
// appears, typed input reaches a real shell and its output is rendered, `ph` in that
// shell is the one shipped beside the sidecar, the window's X11 WM_CLASS is the desktop
// entry's StartupWMClass (so docks group the window under the entry), the clipboard
// plugin answers the sidecar's origin (and no other loopback origin), "Open in system
// browser" in a terminal's context menu hands a port's URL to the OS opener (a fake
// `xdg-open` first on PATH) while the opener's scope refuses non-loopback URLs (shown in
// the menu with the opener's message) and other origins, a browser pane shows a loopback page through the proxy in an iframe, closing the window while a program runs asks
// first (and "cancel" keeps everything), and closing it when idle quits and leaves no
// porthole, sidecar or shell process and saved the session (XDG_STATE_HOME); a sidecar killed under a running app turns the
// window into a page that says so, and takes its shells with it; and nothing was written
// to HOME outside the XDG dirs.
//
// Needs: Xvfb, dbus-run-session, WebKitWebDriver (webkit2gtk-driver), python3 (for
// tests/desktop/x11.py, which plays the window manager's close button), tauri-driver
// (`cargo xtask test` installs it into target/tools), a built UI and sidecar.
// Writes target/desktop-smoke.png (the webview) and, when ImageMagick's `import` is
// present, target/desktop-smoke-screen.png (the whole X screen).
//
// Environment overrides: PORTHOLE_SMOKE_APP (the app), PORTHOLE_SMOKE_PH (the `ph` a pane
// must find first on its PATH; default: beside the app), PORTHOLE_SMOKE_DESKTOP_ENTRY (the
// entry whose StartupWMClass the window must carry; default: the package's template),
// PORTHOLE_TAURI_DRIVER, PORTHOLE_NATIVE_DRIVER (WebKitWebDriver), PORTHOLE_SMOKE_KEEP=1
// (keep temp dir).

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const APP = path.resolve(process.env.PORTHOLE_SMOKE_APP || path.join(ROOT, "target/debug/porthole"));
const PH = path.resolve(process.env.PORTHOLE_SMOKE_PH || path.join(path.dirname(APP), "ph"));
const DESKTOP_ENTRY = path.resolve(
  process.env.PORTHOLE_SMOKE_DESKTOP_ENTRY || path.join(ROOT, "src-tauri/packaging/porthole.desktop"),
);
const TAURI_DRIVER = process.env.PORTHOLE_TAURI_DRIVER || path.join(ROOT, "target/tools/bin/tauri-driver");
const NATIVE_DRIVER = process.env.PORTHOLE_NATIVE_DRIVER || "/usr/bin/WebKitWebDriver";
const SHOT = path.join(ROOT, "target/desktop-smoke.png");
const SCREEN_SHOT = path.join(ROOT, "target/desktop-smoke-screen.png");
const DIALOG_SHOT = path.join(ROOT, "target/desktop-smoke-dialog.png");
const X11_HELPER = path.join(ROOT, "tests/desktop/x11.py");

const UI_TIMEOUT_MS = 45_000;
const OUTPUT_TIMEOUT_MS = 15_000;
const QUIT_TIMEOUT_MS = 15_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...args) => console.log("[desktop-smoke]", ...args);

/** Processes started here, each the leader of its own group; killed in reverse. */
const started = [];
function start(cmd, args, opts) {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], detached: true, ...opts });
  const name = path.basename(cmd);
  const out = fs.createWriteStream(path.join(opts.logDir, `${name}.log`));
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  started.push(child);
  return child;
}
function killGroup(child, signal = "SIGKILL") {
  if (child.pid > 1 && child.exitCode === null && child.signalCode === null) {
    try { process.kill(-child.pid, signal); } catch { /* already gone */ }
  }
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

function freeDisplay() {
  for (let n = 90; n < 200; n++) {
    if (!fs.existsSync(`/tmp/.X11-unix/X${n}`) && !fs.existsSync(`/tmp/.X${n}-lock`)) return n;
  }
  throw new Error("no free X display number in :90..:199");
}

async function waitFor(what, timeoutMs, probe, intervalMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      if (e.fatal) throw e;
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ""}`);
    }
    await sleep(intervalMs);
  }
}

// ---- /proc helpers -------------------------------------------------------------

/** pid → {ppid, state, comm} for every process. */
function processTable() {
  const table = new Map();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const [state, ppid] = stat.slice(close + 2).split(" ");
      table.set(Number(name), { ppid: Number(ppid), state, comm });
    } catch { /* raced with exit */ }
  }
  return table;
}

function descendants(table, rootPid) {
  const out = [];
  const queue = [rootPid];
  while (queue.length) {
    const p = queue.shift();
    for (const [pid, info] of table) {
      if (info.ppid === p) { out.push(pid); queue.push(pid); }
    }
  }
  return out;
}

/** Live (non-zombie) processes whose environment has HOME=home: everything we started. */
function processesWithHome(home) {
  const live = [];
  for (const [pid, info] of processTable()) {
    if (info.state === "Z") continue;
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (env.includes(`HOME=${home}`)) live.push({ pid, ...info, pane: env.some((e) => e.startsWith("PORTHOLE_PANE=")) });
    } catch { /* gone or not ours */ }
  }
  return live;
}

function alive(pid) {
  const info = processTable().get(pid);
  return info !== undefined && info.state !== "Z";
}

/** Runs tests/desktop/x11.py (titles | close NAME) on our display; returns stdout lines. */
function x11(env, ...args) {
  const r = spawnSync("python3", [X11_HELPER, ...args], { env, encoding: "utf8", timeout: 10_000 });
  if (r.status !== 0) throw new Error(`x11.py ${args.join(" ")}: ${r.stderr || r.error}`);
  return r.stdout.split("\n").filter(Boolean);
}

// ---- WebDriver -----------------------------------------------------------------

function webdriver(base) {
  async function call(method, url, body) {
    const res = await fetch(base + url, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(60_000),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) {
      const v = json.value || {};
      throw new Error(`${method} ${url}: ${res.status} ${v.error || ""} ${v.message || ""}`.trim());
    }
    return json.value;
  }
  return { call };
}

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

// ---- the test ------------------------------------------------------------------

async function main() {
  for (const [what, file] of [
    ["app", APP], ["ph", PH], ["desktop entry", DESKTOP_ENTRY], ["tauri-driver", TAURI_DRIVER],
    ["WebKitWebDriver", NATIVE_DRIVER],
  ]) {
    if (!fs.existsSync(file)) throw new Error(`${what} not found at ${file}`);
  }
  const wmClass = /^StartupWMClass=(.+)$/m.exec(fs.readFileSync(DESKTOP_ENTRY, "utf8"))?.[1];
  if (!wmClass) throw new Error(`${DESKTOP_ENTRY} has no StartupWMClass line`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "porthole-smoke-"));
  const home = path.join(tmp, "home");
  const logDir = path.join(tmp, "logs");
  for (const d of ["home", "config", "data", "cache", "runtime", "logs"]) fs.mkdirSync(path.join(tmp, d), { mode: 0o700 });
  log("temp dir", tmp);

  // The OS opener the app will find first on PATH: records each call's arguments, one
  // `arg:` line each, then an `end` line.
  const fakeBin = path.join(tmp, "bin");
  const opened = path.join(tmp, "opened.txt");
  fs.mkdirSync(fakeBin, { mode: 0o700 });
  fs.writeFileSync(
    path.join(fakeBin, "xdg-open"),
    `#!/bin/sh\nfor a in "$@"; do printf 'arg:%s\\n' "$a"; done >> '${opened}'\necho end >> '${opened}'\n`,
    { mode: 0o700 },
  );
  const openedCalls = () => (fs.existsSync(opened) ? fs.readFileSync(opened, "utf8") : "");

  const display = freeDisplay();
  const env = {
    PATH: `${fakeBin}:${process.env.PATH}`,
    LANG: process.env.LANG || "C.UTF-8",
    HOME: home,
    XDG_CONFIG_HOME: path.join(tmp, "config"),
    XDG_DATA_HOME: path.join(tmp, "data"),
    XDG_CACHE_HOME: path.join(tmp, "cache"),
    XDG_STATE_HOME: path.join(tmp, "state"),
    XDG_RUNTIME_DIR: path.join(tmp, "runtime"),
    SHELL: "/bin/bash",
    DISPLAY: `:${display}`,
    NO_AT_BRIDGE: "1",
    GTK_A11Y: "none",
    LIBGL_ALWAYS_SOFTWARE: "1",
  };

  let session = null;
  let lastState = null;
  let wd = null;
  let failure = null;
  try {
    const xvfb = start("Xvfb", [`:${display}`, "-screen", "0", "1280x900x24", "-nolisten", "tcp"], { env, logDir });
    await waitFor(`Xvfb :${display}`, 10_000, () => fs.existsSync(`/tmp/.X11-unix/X${display}`));
    log(`Xvfb on :${display} (pid ${xvfb.pid})`);

    const port = await freePort();
    const nativePort = await freePort();
    const driver = start(
      "dbus-run-session",
      ["--", TAURI_DRIVER, "--port", String(port), "--native-port", String(nativePort), "--native-driver", NATIVE_DRIVER],
      { env, logDir },
    );
    wd = webdriver(`http://127.0.0.1:${port}`);
    await waitFor("tauri-driver", 15_000, async () => {
      const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(2000) });
      return res.ok;
    });
    log(`tauri-driver on ${port} (group ${driver.pid})`);

    // 0. Without a sidecar beside it (nor in ../lib/porthole, the installed layout), the
    //    window says why instead of hanging. A hard link (no copy) when the temp dir is on
    //    the app's file system.
    const lonelyDir = path.join(tmp, "lonely");
    fs.mkdirSync(lonelyDir);
    const lonely = path.join(lonelyDir, path.basename(APP));
    try {
      fs.linkSync(APP, lonely);
    } catch {
      fs.copyFileSync(APP, lonely);
      fs.chmodSync(lonely, 0o755);
    }
    // No browserName: tauri-driver maps tauri:options onto WebKitWebDriver's options.
    session = (await wd.call("POST", "/session", {
      capabilities: { alwaysMatch: { "tauri:options": { application: lonely } } },
    })).sessionId;
    const failurePage = await waitFor("the failure page", 20_000, async () => {
      const text = await wd.call("POST", `/session/${session}/execute/sync`, {
        script: `const f = document.getElementById('failed'); return f && !f.hidden ? f.innerText : null;`,
        args: [],
      });
      return text;
    });
    if (!/porthole-sidecar was not found/.test(failurePage)) {
      throw new Error(`unexpected failure page: ${failurePage}`);
    }
    log("without a sidecar the window says:", failurePage.split("\n").find((l) => /not found/.test(l)));
    await wd.call("DELETE", `/session/${session}`);
    session = null;
    fs.rmSync(lonelyDir, { recursive: true, force: true });
    await waitFor("the sidecar-less app to exit", 10_000, () =>
      !processesWithHome(home).some((p) => p.comm === path.basename(APP).slice(0, 15)));

    // 1.. The real app.
    session = (await wd.call("POST", "/session", {
      capabilities: { alwaysMatch: { "tauri:options": { application: APP } } },
    })).sessionId;
    const s = `/session/${session}`;
    const exec = (script, args = []) => wd.call("POST", `${s}/execute/sync`, { script, args });
    log("session", session);

    // 1. The window leaves the start page for the sidecar's UI and shows a terminal.
    const state = await waitFor("a terminal in the sidecar's UI", UI_TIMEOUT_MS, async () => {
      const st = await exec(
        `return { href: location.href, terminal: !!document.querySelector('.xterm'),
                  failed: (document.getElementById('failed') && !document.getElementById('failed').hidden)
                          ? document.body.innerText : null };`,
      );
      lastState = st;
      if (st.failed) throw Object.assign(new Error(`the app shows its failure page:\n${st.failed}`), { fatal: true });
      return st.href.startsWith("http://127.0.0.1:") && st.terminal ? st : null;
    });
    log("UI loaded at", state.href.replace(/code=[0-9a-f]+/, "code=…"));

    // 1b. The webview has the screencast pane's paint path (CanvasView): a JPEG decoded by
    // createImageBitmap and handed to a `bitmaprenderer` canvas shows its pixels.
    const paint = await exec(`return (async () => {
        const c = document.createElement('canvas');
        const ctx = c.getContext('bitmaprenderer');
        if (!ctx) return 'no bitmaprenderer context';
        const src = document.createElement('canvas');
        src.width = 8; src.height = 4;
        const g = src.getContext('2d'); g.fillStyle = '#f00'; g.fillRect(0, 0, 8, 4);
        const jpeg = await new Promise((r) => src.toBlob(r, 'image/jpeg', 0.9));
        const bmp = await createImageBitmap(jpeg);
        c.width = bmp.width; c.height = bmp.height;
        ctx.transferFromImageBitmap(bmp);
        const out = document.createElement('canvas'); out.width = 8; out.height = 4;
        const o = out.getContext('2d'); o.drawImage(c, 0, 0);
        return Array.from(o.getImageData(4, 2, 1, 1).data).join(',');
      })();`);
    const px = String(paint).split(",").map(Number);
    if (!(px.length === 4 && px[0] > 200 && px[1] < 60 && px[2] < 60)) {
      throw new Error(`the webview cannot show a screencast frame (bitmaprenderer): ${paint}`);
    }
    log("screencast paint path ok:", paint);

    // 2. Type a command into the terminal; the shell must evaluate it.
    const nonce = String(Math.floor(Math.random() * 1e9));
    const expected = `porthole-smoke-42-${nonce}`;
    const typed = `echo porthole-smoke-$((6*7))-${nonce}`;
    await sleep(1000); // let the shell print its prompt
    const textarea = await waitFor("the terminal's input", 10_000, async () => {
      const found = await wd.call("POST", `${s}/element`, { using: "css selector", value: ".xterm-helper-textarea" });
      return found[ELEMENT];
    });
    const screen = await wd.call("POST", `${s}/element`, { using: "css selector", value: ".xterm-screen" });
    await wd.call("POST", `${s}/element/${screen[ELEMENT]}/click`, {}).catch((e) => log("click on terminal:", e.message));
    const typeLine = async (line) => {
      try {
        await wd.call("POST", `${s}/element/${textarea}/value`, { text: `${line}\uE007` });
      } catch (e) {
        log("element send keys failed, using key actions:", e.message);
        const keys = [...`${line}\uE007`].flatMap((c) => [{ type: "keyDown", value: c }, { type: "keyUp", value: c }]);
        await wd.call("POST", `${s}/actions`, { actions: [{ type: "key", id: "kbd", actions: keys }] });
      }
    };
    await typeLine(typed);
    const readScreen = `const rows = document.querySelector('.xterm-rows');
                        return rows ? rows.innerText : (document.querySelector('.xterm') || document.body).innerText;`;
    await waitFor(`"${expected}" in the terminal`, OUTPUT_TIMEOUT_MS, async () => {
      const text = await exec(readScreen);
      return text.split("\n").some((line) => line.trim() === expected);
    }).catch(async (e) => {
      log("terminal text was:\n" + (await exec(readScreen).catch(() => "?")));
      throw e;
    });
    log("shell output rendered:", expected);

    // 2b. The shell finds the `ph` shipped beside the sidecar first on its PATH.
    const phMark = `porthole-ph-${nonce}`;
    await typeLine(`echo "${phMark}=$(command -v ph)"`);
    const wantPh = `${phMark}=${fs.realpathSync(PH)}`;
    await waitFor(`"${wantPh}" in the terminal`, OUTPUT_TIMEOUT_MS, async () =>
      (await exec(readScreen)).split("\n").some((line) => line.trim() === wantPh),
    ).catch(async (e) => {
      log("terminal text was:\n" + (await exec(readScreen).catch(() => "?")));
      throw e;
    });
    log("ph in a pane is", fs.realpathSync(PH));

    // 2d. Issue 27's done-when, in the desktop app: `yes` for 10 s, then Ctrl-C. The pane
    // falls behind the flood and catches up by state (protocol §5.4), so the next command's
    // output comes at once, and the flood's last lines are above it.
    await typeLine("yes porthole-yes-line");
    await sleep(10_000);
    const ctrlC = Date.now();
    try {
      await wd.call("POST", `${s}/element/${textarea}/value`, { text: "\uE009c\uE000" });
    } catch (e) {
      log("element send keys failed, using key actions:", e.message);
      const keys = [{ type: "keyDown", value: "\uE009" }, { type: "keyDown", value: "c" }, { type: "keyUp", value: "c" }, { type: "keyUp", value: "\uE009" }];
      await wd.call("POST", `${s}/actions`, { actions: [{ type: "key", id: "kbd", actions: keys }] });
    }
    const afterYes = `after-yes-${nonce}`;
    await typeLine(`echo ${afterYes}`);
    await waitFor(`"${afterYes}" after yes and Ctrl-C`, OUTPUT_TIMEOUT_MS, async () =>
      (await exec(readScreen)).split("\n").some((line) => line.trim() === afterYes),
    ).catch(async (e) => {
      log("terminal text was:\n" + (await exec(readScreen).catch(() => "?")));
      throw e;
    });
    const flood = await exec(`const h = document.querySelector('.xterm-host');
                              const rows = (document.querySelector('.xterm-rows') || document.body).innerText.split('\\n');
                              return { caught: h ? Number(h.dataset.caughtUpLines || 0) : -1,
                                       yes: rows.filter((r) => r.trim() === 'porthole-yes-line').length };`);
    if (!(flood.caught > 0)) throw new Error(`the pane never caught up by state during the flood: ${JSON.stringify(flood)}`);
    if (flood.yes < 3) throw new Error(`the flood's last lines are not above the prompt: ${JSON.stringify(flood)}`);
    log(`yes for 10 s, then Ctrl-C: the next command's output in ${Date.now() - ctrlC} ms; ` +
      `${flood.caught} lines went by in catch-ups`);

    // 2c. The window's WM_CLASS (as xprop reads it) names the desktop entry's StartupWMClass.
    const xprop = spawnSync("xprop", ["-name", "Porthole", "WM_CLASS"], { env, encoding: "utf8", timeout: 10_000 });
    const classes = /^WM_CLASS\(STRING\) = (.*)$/m.exec(xprop.stdout || "")?.[1].match(/"[^"]*"/g)?.map((c) => c.slice(1, -1));
    if (!classes || classes[1] !== wmClass) {
      throw new Error(`the window's WM_CLASS is ${JSON.stringify(classes)} (xprop: ${xprop.stdout || xprop.stderr || xprop.error}), ` +
        `the desktop entry's StartupWMClass is ${wmClass}`);
    }
    log("window WM_CLASS", JSON.stringify(classes), "matches StartupWMClass", wmClass);

    // 3. The clipboard plugin is reachable from the sidecar's origin.
    const clip = `porthole-clip-${nonce}`;
    const clipResult = await wd.call("POST", `${s}/execute/async`, {
      script: `const done = arguments[arguments.length - 1];
               const t = window.__TAURI__;
               if (!t) { done({ ok: false, error: 'no window.__TAURI__' }); return; }
               t.core.invoke('plugin:clipboard-manager|write_text', { text: arguments[0] })
                 .then(() => t.core.invoke('plugin:clipboard-manager|read_text'))
                 .then((v) => done({ ok: true, value: v }), (e) => done({ ok: false, error: String(e) }));`,
      args: [clip],
    });
    if (!clipResult.ok || clipResult.value !== clip) {
      throw new Error(`clipboard round trip failed: ${JSON.stringify(clipResult)}`);
    }
    log("clipboard round trip ok");

    // 3b. Attention's desktop notifications (DESIGN §13): the notification plugin stands in
    //     for the page's Notification API and answers the sidecar's origin.
    const notes = await wd.call("POST", `${s}/execute/async`, {
      script: `const done = arguments[arguments.length - 1];
               window.__TAURI__.core.invoke('plugin:notification|is_permission_granted')
                 .then((g) => done({ ok: true, granted: g, api: typeof window.Notification }), (e) => done({ ok: false, error: String(e) }));`,
      args: [],
    });
    if (!notes.ok || notes.granted !== true || notes.api !== "function") {
      throw new Error(`notifications are not wired: ${JSON.stringify(notes)}`);
    }
    log("notification plugin reachable, permission granted");

    // 4. Screenshot of the webview (before the browser pane: WebKitWebDriver's
    //    screenshot hangs once the page holds a cross-origin iframe).
    await sleep(300);
    const png = await wd.call("GET", `${s}/screenshot`);
    fs.mkdirSync(path.dirname(SHOT), { recursive: true });
    fs.writeFileSync(SHOT, Buffer.from(png, "base64"));
    log("screenshot:", SHOT);

    // 4c. "Open in system browser": a server in the terminal, the context menu (Ctrl-b >)
    //     lists its port, and the action hands the port's URL to the OS opener.
    const keys = (actions) => wd.call("POST", `${s}/actions`, { actions: [{ type: "key", id: "kbd", actions }] })
      .then(() => wd.call("DELETE", `${s}/actions`).catch(() => {}));
    const chord = (mod, key) => [
      { type: "keyDown", value: mod }, { type: "keyDown", value: key }, { type: "keyUp", value: key }, { type: "keyUp", value: mod },
    ];
    const findElement = (value) => wd.call("POST", `${s}/element`, { using: "css selector", value }).then((e) => e[ELEMENT]);
    const menuFailure = () => exec(`const f = document.querySelector('[data-testid=ports-failure]'); return f ? f.textContent : null;`);
    const menuOpen = () => exec(`return !!document.querySelector('[data-testid=context-menu]');`);
    /** Starts `python3 -m http.server` on `bind` in the terminal; returns its port. */
    const serveInTerminal = async (bind) => {
      await typeLine(`python3 -m http.server 0 --bind ${bind}`);
      const re = new RegExp(`Serving HTTP on ${bind.replaceAll(".", "\\.")} port (\\d+)`);
      return waitFor(`the terminal's http.server on ${bind} to listen`, OUTPUT_TIMEOUT_MS, async () => re.exec(await exec(readScreen))?.[1]);
    };
    /** Ctrl-b >, then the row of `port`, then "Open in system browser". */
    const openInSystemBrowser = async (port) => {
      await keys([...chord("\uE009", "b"), { type: "keyDown", value: ">" }, { type: "keyUp", value: ">" }]);
      const row = await waitFor(`port ${port} in the context menu`, 10_000, () =>
        findElement(`[data-testid=context-menu] [data-testid=port-row][data-port="${port}"]`));
      await wd.call("POST", `${s}/element/${row}/click`, {});
      const action = await waitFor("the system-browser action", 10_000, () =>
        findElement(`[data-testid=port-actions][data-port="${port}"] [data-testid=port-open-system]`));
      await wd.call("POST", `${s}/element/${action}/click`, {});
    };
    /** Ctrl-C in the terminal; waits until no python3 runs in a pane. */
    const stopServer = async () => {
      await wd.call("POST", `${s}/element/${screen[ELEMENT]}/click`, {}).catch(() => {});
      await keys(chord("\uE009", "c"));
      await waitFor("the terminal's http.server to stop", 10_000, () =>
        !processesWithHome(home).some((p) => p.pane && p.comm.startsWith("python3")));
    };

    const served = await serveInTerminal("127.0.0.1");
    await openInSystemBrowser(served);
    const wantOpened = `arg:http://localhost:${served}/\nend\n`;
    await waitFor("the OS opener to get the port's URL", 10_000, async () => {
      const failure = await menuFailure();
      if (failure) throw Object.assign(new Error(`the context menu says: ${failure}`), { fatal: true });
      return openedCalls() === wantOpened;
    }).catch((e) => {
      throw new Error(`${e.message}; opener calls: ${JSON.stringify(openedCalls())}`);
    });
    await waitFor("the context menu to close", 5_000, async () => !(await menuOpen()));
    log("Open in system browser ran the OS opener with", `http://localhost:${served}/`);
    await stopServer();

    // The opener's scope: http on 127.0.0.1, localhost or [::1] with a port only; anything
    // else is refused with the opener's own message and never reaches the OS opener.
    const tryOpen = (url) => wd.call("POST", `${s}/execute/async`, {
      script: `const done = arguments[arguments.length - 1];
               window.__TAURI__.core.invoke('plugin:opener|open_url', { url: arguments[0] })
                 .then(() => done({ ok: true }), (e) => done({ ok: false, error: String(e) }));`,
      args: [url],
    });
    for (const url of ["http://example.com/", `http://127.0.0.1:${served}@example.com/`, `https://localhost:${served}/`, "file:///etc/passwd"]) {
      const r = await tryOpen(url);
      if (r.ok || !/not allowed to open url/i.test(r.error)) throw new Error(`the opener's scope let ${url} through: ${JSON.stringify(r)}`);
    }
    if (openedCalls() !== wantOpened) throw new Error(`a refused URL reached the OS opener: ${JSON.stringify(openedCalls())}`);
    log("the opener's scope refuses non-loopback, non-http and userinfo URLs");

    // A refusal from the menu (a port bound to 127.0.0.2 opens as http://127.0.0.2:P/, which
    // the scope does not admit) shows the opener's message in the menu.
    const other = await serveInTerminal("127.0.0.2");
    await openInSystemBrowser(other);
    const wantFailure = `Couldn't open http://127.0.0.2:${other}/: Not allowed to open url http://127.0.0.2:${other}/`;
    const shown = await waitFor("the refusal in the context menu", 10_000, menuFailure);
    if (shown !== wantFailure) throw new Error(`the context menu says ${JSON.stringify(shown)}, expected ${JSON.stringify(wantFailure)}`);
    if (openedCalls() !== wantOpened) throw new Error(`a refused URL reached the OS opener: ${JSON.stringify(openedCalls())}`);
    await keys([{ type: "keyDown", value: "\uE00C" }, { type: "keyUp", value: "\uE00C" }]);
    await waitFor("the context menu to close on Escape", 5_000, async () => !(await menuOpen()));
    log("a refused open shows in the menu:", shown);
    await stopServer();

    // 3b. A browser pane (Ctrl-b b) shows a loopback page through the sidecar's proxy in
    //     an iframe: the WebKitGTK side of what the e2e suite checks in Chromium.
    const fixtureText = `porthole-desktop-iframe-${nonce}`;
    const fixture = http.createServer((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(`<!doctype html><title>fixture</title><h1 id="h">${fixtureText}</h1>`);
    });
    await new Promise((r) => fixture.listen(0, "127.0.0.1", r));
    try {
      const ctrlB = [
        { type: "keyDown", value: "\uE009" }, { type: "keyDown", value: "b" }, { type: "keyUp", value: "b" },
        { type: "keyUp", value: "\uE009" }, { type: "keyDown", value: "b" }, { type: "keyUp", value: "b" },
      ];
      await wd.call("POST", `${s}/actions`, { actions: [{ type: "key", id: "kbd", actions: ctrlB }] });
      await wd.call("DELETE", `${s}/actions`).catch(() => {});
      const urlInput = await waitFor("a browser pane's URL field", 10_000, async () =>
        (await wd.call("POST", `${s}/element`, {
          using: "css selector",
          value: "[data-testid=pane][data-focused=true] [data-testid=browser-url-input]",
        }))[ELEMENT]);
      await wd.call("POST", `${s}/element/${urlInput}/clear`, {}).catch(() => {});
      await wd.call("POST", `${s}/element/${urlInput}/value`, { text: `127.0.0.1:${fixture.address().port}\uE007` });
      const frame = await waitFor("the browser pane's iframe", 10_000, async () =>
        (await wd.call("POST", `${s}/element`, { using: "css selector", value: "iframe[data-testid=browser-frame]" }))[ELEMENT]);
      await wd.call("POST", `${s}/frame`, { id: { [ELEMENT]: frame } });
      try {
        await waitFor("the fixture page inside the iframe", 15_000, async () =>
          (await exec("const h = document.getElementById('h'); return h ? h.textContent : null;")) === fixtureText);
      } finally {
        await wd.call("POST", `${s}/frame`, { id: null });
      }
      log("browser pane shows a loopback page in an iframe:", fixtureText);
    } finally {
      fixture.close();
    }

    // 4b. The whole X screen, browser pane included (ImageMagick's import, if present).
    await sleep(500);
    const imp = spawnSync("import", ["-window", "root", SCREEN_SHOT], { env, timeout: 15_000 });
    if (imp.status === 0) log("screen shot:", SCREEN_SHOT);

    // 5. Closing the window while a program runs in a terminal asks first; "Cancel"
    //    (here: closing the question) keeps everything running.
    await typeLine("sleep 300");
    const sleeper = await waitFor("sleep to run in the terminal", 10_000, () =>
      processesWithHome(home).find((p) => p.pane && p.comm === "sleep"));
    const table = processTable();
    const appPid = descendants(table, driver.pid).find((p) => table.get(p).comm === path.basename(APP).slice(0, 15));
    if (!appPid) throw new Error("cannot find the app's process");
    const ours = processesWithHome(home);
    const sidecar = ours.find((p) => p.comm.startsWith("porthole-sideca"));
    const panes = ours.filter((p) => p.pane);
    log(`app pid ${appPid}, sidecar pid ${sidecar?.pid}, terminal processes ${panes.map((p) => `${p.pid}(${p.comm})`).join(" ")}`);
    if (!sidecar) throw new Error("no porthole-sidecar process found while the app runs");
    await sleep(500); // the sidecar reads `busy` from the PTY's foreground group
    x11(env, "close", "Porthole");
    await waitFor('the "Quit Porthole?" question', 10_000, () => x11(env, "titles").includes("Quit Porthole?"));
    log("closing with a busy terminal asks first");
    if (spawnSync("import", ["-window", "root", DIALOG_SHOT], { env, timeout: 15_000 }).status === 0) {
      log("dialog screen shot:", DIALOG_SHOT);
    }
    x11(env, "close", "Quit Porthole?");
    await sleep(1500);
    if (!alive(appPid) || !alive(sidecar.pid)) throw new Error("cancelling the quit question still quit");
    log("cancel keeps the app running");

    // 6. Closing the window with idle terminals quits, and leaves no porthole, sidecar
    //    or shell process behind.
    process.kill(sleeper.pid, "SIGKILL"); // our own child: its HOME is our temp HOME
    await waitFor("the shell to be idle again", 5_000, () => !alive(sleeper.pid));
    await sleep(500);
    x11(env, "close", "Porthole");
    await waitFor("the app to exit", QUIT_TIMEOUT_MS, () => !alive(appPid));
    const leftovers = () => processesWithHome(home).filter((p) => p.comm.startsWith("porthole") || p.pane);
    const left = await waitFor("the sidecar and shells to be gone", 3000, () => (leftovers().length ? null : []))
      .catch(() => leftovers());
    if (left.length) {
      throw new Error(`processes left after quit: ${left.map((p) => `${p.pid}(${p.comm})`).join(" ")}`);
    }
    log("quit left no porthole, sidecar or shell process");
    // The quit went through the sidecar's graceful shutdown, which saves the session.
    const saved = path.join(tmp, "state/porthole/session.json");
    const doc = fs.existsSync(saved) ? JSON.parse(fs.readFileSync(saved, "utf8")) : null;
    if (!doc?.workspace) throw new Error(`quitting saved no session at ${saved}: ${JSON.stringify(doc)?.slice(0, 200)}`);
    log("the quit saved the session:", Object.keys(doc.terminals ?? {}).length, "terminal record(s)");
    await wd.call("DELETE", `${s}`).catch(() => {});
    session = null;

    // 7. A sidecar that dies under a running app: the window says so (instead of a UI
    //    that cannot reach its server), and its shells go with it.
    session = (await wd.call("POST", "/session", {
      capabilities: { alwaysMatch: { "tauri:options": { application: APP } } },
    })).sessionId;
    const exec2 = (script) => wd.call("POST", `/session/${session}/execute/sync`, { script, args: [] });
    await waitFor("a terminal again", UI_TIMEOUT_MS, async () =>
      (await exec2("return location.href.startsWith('http://127.0.0.1:') && !!document.querySelector('.xterm');")) &&
      processesWithHome(home).some((p) => p.pane));
    // Another loopback origin (as a proxied dev server would be) gets no clipboard.
    const foreign = http.createServer((_req, res) => res.end("<!doctype html><title>foreign</title><p>foreign"));
    await new Promise((r) => foreign.listen(0, "127.0.0.1", r));
    try {
      await wd.call("POST", `/session/${session}/url`, { url: `http://127.0.0.1:${foreign.address().port}/` });
      const denied = await wd.call("POST", `/session/${session}/execute/async`, {
        script: `const done = arguments[arguments.length - 1];
                 const t = window.__TAURI__;
                 if (!t) { done({ ok: false, error: 'no window.__TAURI__' }); return; }
                 t.core.invoke('plugin:clipboard-manager|read_text')
                   .then((v) => done({ ok: true, value: v }), (e) => done({ ok: false, error: String(e) }));`,
        args: [],
      });
      if (denied.ok) throw new Error(`another loopback origin could read the clipboard: ${JSON.stringify(denied)}`);
      log("another loopback origin is refused the clipboard:", denied.error.slice(0, 80));
      const openDenied = await wd.call("POST", `/session/${session}/execute/async`, {
        script: `const done = arguments[arguments.length - 1];
                 window.__TAURI__.core.invoke('plugin:opener|open_url', { url: location.href })
                   .then(() => done({ ok: true }), (e) => done({ ok: false, error: String(e) }));`,
        args: [],
      });
      if (openDenied.ok || !openedCalls().split("\n").every((l) => !l.includes(`:${foreign.address().port}/`))) {
        throw new Error(`another loopback origin could use the OS opener: ${JSON.stringify(openDenied)}`);
      }
      log("another loopback origin is refused the OS opener:", openDenied.error.slice(0, 80));
    } finally {
      foreign.close();
    }
    const victim = processesWithHome(home).find((p) => p.comm.startsWith("porthole-sideca"));
    process.kill(victim.pid, "SIGKILL");
    const crashPage = await waitFor("the crash page", 15_000, () =>
      exec2(`const f = document.getElementById('failed'); return f && !f.hidden ? f.innerText : null;`));
    if (!/exited unexpectedly/.test(crashPage)) throw new Error(`unexpected crash page: ${crashPage}`);
    log("after the sidecar is killed the window says:", crashPage.split("\n").find((l) => /unexpectedly/.test(l)));
    const orphans = await waitFor("the dead sidecar's shells to be gone", 5_000, () =>
      (processesWithHome(home).some((p) => p.pane) ? null : []))
      .catch(() => processesWithHome(home).filter((p) => p.pane));
    if (orphans.length) throw new Error(`shells outlived a killed sidecar: ${orphans.map((p) => `${p.pid}(${p.comm})`).join(" ")}`);
    log("no shell outlived the killed sidecar");

    // 8. Everything the app wrote went to the XDG dirs: HOME holds at most the shell's own
    //    history (bash writes it, not Porthole).
    const inHome = fs.readdirSync(home, { recursive: true }).filter((f) => f !== ".bash_history");
    if (inHome.length) throw new Error(`the app wrote outside the XDG dirs, in HOME: ${inHome.slice(0, 10).join(", ")}`);
    log("HOME holds nothing but the shell's history: the app wrote only to the XDG dirs");
  } catch (e) {
    failure = e;
    if (lastState) log("last page state:", JSON.stringify(lastState).replace(/code=[0-9a-f]+/, "code=…"));
    if (session && wd) {
      const png = await wd.call("GET", `/session/${session}/screenshot`).catch(() => null);
      if (png) {
        fs.mkdirSync(path.dirname(SHOT), { recursive: true });
        fs.writeFileSync(SHOT.replace(/\.png$/, "-failure.png"), Buffer.from(png, "base64"));
        log("failure screenshot:", SHOT.replace(/\.png$/, "-failure.png"));
      }
    }
  } finally {
    if (session && wd) await wd.call("DELETE", `/session/${session}`).catch(() => {});
    for (const child of started.reverse()) killGroup(child, "SIGTERM");
    await sleep(500);
    for (const child of started) killGroup(child, "SIGKILL");
    // Anything that still carries our HOME was started by this test: don't leak it.
    for (const p of processesWithHome(home)) { try { process.kill(p.pid, "SIGKILL"); } catch { /* gone */ } }
    if (failure) {
      for (const f of fs.existsSync(logDir) ? fs.readdirSync(logDir) : []) {
        const text = fs.readFileSync(path.join(logDir, f), "utf8").split("\n").slice(-40).join("\n");
        console.log(`---- ${f} (last 40 lines) ----\n${text}`);
      }
    }
    if (!process.env.PORTHOLE_SMOKE_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  }
  if (failure) throw failure;
}

main().then(
  () => { log("PASS"); process.exit(0); },
  (e) => { console.error("[desktop-smoke] FAIL:", e.message); process.exit(1); },
);
