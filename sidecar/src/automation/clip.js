// The part of `r` ({l, t, r, b}: viewport px of `node`'s window) left visible by every
// ancestor that clips its overflow (through shadow roots), by the window, and then by each
// frame element's content box up through the same-process windows; in the px of the
// highest same-process window reached. May come back empty (r.r <= r.l or r.b <= r.t).
// Shared by the in-page scripts of frames.rs and scroll.rs (spliced in with include_str!).
function clipUp(node, r) {
  const up = n => n.parentElement || (n.getRootNode && n.getRootNode().host) || null;
  const clip = (l, t, rr, bb) => { r = {l: Math.max(r.l, l), t: Math.max(r.t, t), r: Math.min(r.r, rr), b: Math.min(r.b, bb)}; };
  let win = node.ownerDocument.defaultView;
  for (;;) {
    for (let a = up(node); a; a = up(a)) {
      if (a === win.document.documentElement || a === win.document.body) continue;
      const s = win.getComputedStyle(a);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
        const c = a.getBoundingClientRect();
        clip(c.left + a.clientLeft, c.top + a.clientTop, c.left + a.clientLeft + a.clientWidth, c.top + a.clientTop + a.clientHeight);
      }
    }
    const de = win.document.documentElement;
    clip(0, 0, de.clientWidth || win.innerWidth, de.clientHeight || win.innerHeight);
    const fe = win.frameElement;
    if (!fe) return r;
    const f = fe.getBoundingClientRect();
    const fs = win.parent.getComputedStyle(fe);
    const dx = f.left + fe.clientLeft + parseFloat(fs.paddingLeft), dy = f.top + fe.clientTop + parseFloat(fs.paddingTop);
    r = {l: r.l + dx, t: r.t + dy, r: r.r + dx, b: r.b + dy};
    node = fe; win = win.parent;
  }
}
