// The focus walk's in-page half (issue 24 item 5), run in Porthole's isolated world of the
// host's frame with `this` = the closed shadow host: the page's scripts neither see the
// state kept here (a global of this world) nor can change the functions used.
//   op 'start' (back): remembers what has focus, then puts focus on the last tabbable element
//     before the host (after it, going back), or takes focus away when there is none, so the
//     next trusted Tab (Shift+Tab) enters the host. → 'before' | 'after' | 'none'.
//   op 'where': → {inside, none}: focus is on the host or in its tree (a closed tree's focus
//     shows as the host itself), or nowhere (the body).
//   op 'restore': puts focus back where 'start' found it. → true when it did.
function (op, back) {
  const state = globalThis.__portholeFocusWalk || (globalThis.__portholeFocusWalk = {});
  const deepActive = () => {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  };
  const host = this;
  // The host or a node of its tree, through open shadow roots on the way out.
  const within = (n) => {
    for (let x = n; x; x = x.parentNode || (x instanceof ShadowRoot ? x.host : null)) if (x === host) return true;
    return false;
  };
  if (op === 'where') {
    const a = deepActive();
    return { inside: !!a && within(a), none: !a || a === document.body || a === document.documentElement };
  }
  if (op === 'restore') {
    const s = state.saved;
    state.saved = null;
    if (s && s.isConnected && s !== document.body) { s.focus({ preventScroll: true }); return deepActive() === s; }
    const a = document.activeElement;
    if (a && a !== document.body && typeof a.blur === 'function') a.blur();
    return true;
  }
  // 'start'
  state.saved = deepActive();
  const TABBABLE = 'a[href], area[href], button, input, select, textarea, iframe, summary, [tabindex], [contenteditable]';
  const candidates = [];
  // Tabbable elements of the document and its open shadow trees, in tree order.
  const collect = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.matches(TABBABLE) && el.tabIndex >= 0 && !el.matches(':disabled') && el.getClientRects().length) candidates.push(el);
      if (el.shadowRoot) collect(el.shadowRoot);
    }
  };
  collect(document);
  const before = (el) => !within(el) && !!(host.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING) && !el.contains(host);
  const after = (el) => !within(el) && !!(host.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
  const pick = back ? candidates.find(after) : candidates.filter(before).pop();
  if (pick) { pick.focus({ preventScroll: true }); return back ? 'after' : 'before'; }
  const a = document.activeElement;
  if (a && a !== document.body && typeof a.blur === 'function') a.blur();
  return 'none';
}
