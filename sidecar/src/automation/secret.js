// Whether a field's value is secret (DESIGN §12: never return a password or card value),
// shared by the outline walk (`outline.js`) and the element-state read (`node.rs`), both
// spliced after this into one function run in Porthole's isolated world of the frame.
//
// Secrecy follows the field, not its current type: a password field that a page's "show
// password" button switched to `type=text` stays secret. Secret is a field that
// - is an `<input type=password>` now, or
// - was one in this document (remembered in the world's global, which the page's scripts
//   cannot see; a MutationObserver records each `type` change away from `password`, in the
//   document and in every shadow root read). The memory starts with the document: this file
//   also runs at every document's start in this world (`walk.rs` SECRET_RECORDER), so a
//   field the page switched before Porthole's first read counts. Where that script does not
//   reach (the first document of an out-of-process frame, or of a tab the page opened; a
//   closed shadow root's fields before a read sees the root), memory starts at the first read,
//   or
// - has an `autocomplete` token `current-password`, `new-password`, `one-time-code` or
//   `cc-*` (HTML autofill field names of credentials and payment cards).
const secretField = (() => {
  const KEY = Symbol.for('porthole.secretFields');
  const AUTOCOMPLETE = /^(current-password|new-password|one-time-code|cc-.+)$/;
  let mem = globalThis[KEY];
  if (!mem) {
    const seen = new WeakSet();
    const roots = new WeakSet();
    const note = records => {
      for (const r of records) if ((r.oldValue || '').toLowerCase() === 'password') seen.add(r.target);
    };
    const observer = new MutationObserver(note);
    const watch = root => {
      if (roots.has(root)) return;
      roots.add(root);
      observer.observe(root, { subtree: true, attributes: true, attributeFilter: ['type'], attributeOldValue: true });
    };
    mem = globalThis[KEY] = { seen, watch, flush: () => note(observer.takeRecords()) };
    watch(document);
  }
  return el => {
    if (!el || el.nodeType !== 1) return false;
    const root = el.getRootNode();
    if (root !== document && root.nodeType === 11) mem.watch(root);
    // Changes not yet delivered to the observer (it runs after the page's task) count now.
    mem.flush();
    if (el.localName === 'input' && (el.getAttribute('type') || '').toLowerCase() === 'password') {
      mem.seen.add(el);
      return true;
    }
    if (mem.seen.has(el)) return true;
    return (el.getAttribute('autocomplete') || '').toLowerCase().split(/\s+/).some(t => AUTOCOMPLETE.test(t));
  };
})();
