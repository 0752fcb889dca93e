// Find in page for a screencast pane's find bar (Ctrl+F; protocol §8.4 `find`), run in a
// host-owned isolated world of the main frame. Chromium's own find-in-page belongs to the
// browser UI and is not in CDP, so this is a small one of our own: the rendered text of the
// document (whitespace collapsed, no match across a block boundary), every match highlighted
// with the CSS Custom Highlight API (all yellow, the active one orange, as Chrome does) and
// the active one scrolled to the middle of the viewport. The page's selection and focus are
// left alone. The page can see the two highlights and one adopted style sheet while the bar
// is open (removed when it closes); it cannot see the text searched for.
// Called as (text, backwards, next): `next` false searches `text` anew (the active match
// kept where it still is one, else the first one in view or below it); true moves to the
// next (or previous) match, wrapping. "" clears. Answers { index (1-based, 0: none), count,
// capped (count stopped at MAX) }.
(text, backwards, next) => {
  const MAX = 1000;
  const S = (globalThis.__portholeFind ??= { sheet: null, active: null });
  const clear = () => {
    CSS.highlights.delete('porthole-find');
    CSS.highlights.delete('porthole-find-active');
    if (S.sheet) document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== S.sheet);
    S.sheet = null;
    S.active = null;
  };
  if (!text) {
    clear();
    return { index: 0, count: 0, capped: false };
  }
  // The rendered text: a string with, per character, the text node and offset it came from.
  const nodes = [];
  let chars = '';
  // Per character of `chars`: its text node's index and offset there (-1: a block break).
  const atNode = [];
  const atOff = [];
  const blockOf = new Map();
  const block = (el) => {
    for (let e = el; e; e = e.parentElement) {
      let b = blockOf.get(e);
      if (b === undefined) {
        const d = getComputedStyle(e).display;
        b = d.startsWith('inline') || d === 'contents' ? null : e;
        blockOf.set(e, b);
      }
      if (b) return b;
    }
    return null;
  };
  const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_TEXT, {
    acceptNode(n) {
      const p = n.parentElement;
      if (!p || /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|TEXTAREA|OPTION)$/.test(p.tagName)) return NodeFilter.FILTER_REJECT;
      return p.checkVisibility({ visibilityProperty: true }) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
    },
  });
  let lastBlock;
  for (let n = walker.nextNode(); n && chars.length < 4_000_000; n = walker.nextNode()) {
    const b = block(n.parentElement);
    if (lastBlock !== undefined && b !== lastBlock) {
      chars += '\n';
      atNode.push(-1);
      atOff.push(-1);
    }
    lastBlock = b;
    const i = nodes.push(n) - 1;
    const d = n.data;
    for (let o = 0; o < d.length; o++) {
      const c = d[o];
      if (/\s/.test(c)) {
        if (chars.endsWith(' ') || chars.endsWith('\n') || chars === '') continue;
        chars += ' ';
      } else {
        // Lower-casing that changes the length (rare) keeps the character as it is.
        const l = c.toLowerCase();
        chars += l.length === 1 ? l : c;
      }
      atNode.push(i);
      atOff.push(o);
    }
  }
  const needle = text.toLowerCase().replace(/\s+/g, ' ');
  const ranges = [];
  let capped = false;
  for (let k = chars.indexOf(needle); k >= 0; k = chars.indexOf(needle, k + 1)) {
    const z = k + needle.length - 1;
    if (chars.slice(k, z + 1).includes('\n')) continue;
    if (ranges.length === MAX) {
      capped = true;
      break;
    }
    const r = document.createRange();
    r.setStart(nodes[atNode[k]], atOff[k]);
    r.setEnd(nodes[atNode[z]], atOff[z] + 1);
    ranges.push(r);
  }
  if (!ranges.length) {
    clear();
    return { index: 0, count: 0, capped: false };
  }
  // Where the active match was (a range that no longer matches is dropped).
  let i = -1;
  if (S.active) {
    const p = S.active;
    i = ranges.findIndex((r) => r.startContainer === p.startContainer && r.startOffset === p.startOffset);
  }
  if (next && i >= 0) i = (i + (backwards ? -1 : 1) + ranges.length) % ranges.length;
  else if (i < 0) {
    const top = ranges.findIndex((r) => r.getBoundingClientRect().bottom >= 0);
    i = backwards ? (top <= 0 ? ranges.length - 1 : top - 1) : Math.max(0, top);
  }
  const active = ranges[i];
  S.active = active;
  if (!S.sheet) {
    S.sheet = new CSSStyleSheet();
    S.sheet.replaceSync('::highlight(porthole-find){background:#ffeb3b;color:#000}::highlight(porthole-find-active){background:#ff9632;color:#000}');
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, S.sheet];
  }
  const all = new Highlight(...ranges);
  const one = new Highlight(active);
  one.priority = 1;
  CSS.highlights.set('porthole-find', all);
  CSS.highlights.set('porthole-find-active', one);
  const r = active.getBoundingClientRect();
  if (r.top < 0 || r.bottom > innerHeight || r.left < 0 || r.right > innerWidth) {
    const el = active.startContainer.parentElement;
    el?.scrollIntoView({ block: 'center', inline: 'nearest' });
  }
  return { index: i + 1, count: ranges.length, capped };
}
