// The bundled page shown until the sidecar is ready. It polls the shell's
// `startup_status` command: on "ready" the shell navigates the window to the
// sidecar itself; on "failed" this page says why.
//
// Only a failure the shell reports is shown. A rejected call (an IPC-level error) is asked
// again: the shell checks each call against the webview's *current* URL, and from the moment
// it navigates the window to the sidecar until the sidecar's page replaces this one, that
// URL is already the sidecar's origin, which is not granted `startup_status` (the ACL answers
// "startup_status not allowed. Plugin not found"). On a busy machine this page keeps running,
// and polling, for a while in that state (issue 22, item 1).
(function () {
  "use strict";
  /** Between two polls while starting, in ms. */
  var POLL_MS = 150;
  /** Before asking again after a rejected call, in ms. */
  var RETRY_MS = 250;
  /** Rejected calls in a row (≈ 30 s) after which the page says it is still trying. */
  var SAY_AFTER_REJECTIONS = 120;
  var rejections = 0;
  function show(status) {
    document.getElementById("starting").hidden = true;
    document.getElementById("failed").hidden = false;
    document.getElementById("reason").textContent = status.reason || "unknown error";
    document.getElementById("hint").textContent = status.hint || "";
    if (status.stderr_tail) {
      var pre = document.getElementById("stderr");
      pre.textContent = status.stderr_tail;
      pre.hidden = false;
    }
  }
  function waiting(text) {
    var note = document.getElementById("waiting");
    note.textContent = text;
    note.hidden = !text;
  }
  function poll() {
    var tauri = window.__TAURI__;
    if (!tauri || !tauri.core) { setTimeout(poll, 100); return; }
    tauri.core.invoke("startup_status").then(function (status) {
      rejections = 0;
      waiting("");
      if (status && status.state === "failed") { show(status); } else { setTimeout(poll, POLL_MS); }
    }, function (err) {
      rejections += 1;
      if (rejections >= SAY_AFTER_REJECTIONS) {
        waiting("Still waiting for the shell to answer (" + err + ").");
      }
      setTimeout(poll, RETRY_MS);
    });
  }
  poll();
})();
