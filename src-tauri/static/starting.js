// The bundled page shown until the sidecar is ready. It polls the shell's
// `startup_status` command: on "ready" the shell navigates the window to the
// sidecar itself; on "failed" this page says why.
(function () {
  "use strict";
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
  function poll() {
    var tauri = window.__TAURI__;
    if (!tauri || !tauri.core) { setTimeout(poll, 100); return; }
    tauri.core.invoke("startup_status").then(function (status) {
      if (status.state === "failed") { show(status); } else { setTimeout(poll, 150); }
    }, function (err) {
      show({ reason: "cannot ask the shell for its status: " + err });
    });
  }
  poll();
})();
