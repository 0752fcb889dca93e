// The page's outline, computed in the page (DESIGN §12), in Porthole's isolated world: the
// page's scripts neither see it nor can change what it reads (its own prototypes are ours).
// Called with `this` = a document (the frame's own: `Runtime.callFunctionOn` on the world's
// context) or a closed shadow root (resolved by the sidecar, the page gives no handle on it).
//
// It walks the flat tree (open shadow roots, slots as rendered) in order and returns every
// element it visits, pre-order, as `{p, t, …}` (parent index, nodeName), so the sidecar can
// join each one to `DOMSnapshot.captureSnapshot`'s flat tree (the same order, by structure
// and tag) for its `backendNodeId` and `isClickable`. Text (a ::before's or ::after's too)
// is `{p, s}`. An element that is not rendered at all (display: none, aria-hidden, inert)
// is `{p, t, z: 1}`, its subtree left out. Others carry what the outline shows: role `r`
// (explicit token, else the implicit role of HTML-AAM / ARIA in HTML; absent = generic),
// name `n` (accname 1.2, see `name`), value `v`, checked `c`, expanded `x`, level `l`, flags
// `f` (bits below), and `o`, the indices of the walked elements its aria-owns names (the
// sidecar moves them under it). Boxes are not measured here (a rectangle per element is
// most of a walk's time): the DOM snapshot has them. With `opts.sig` (the component
// signatures lever), a custom element without an open shadow root (it may host a closed one)
// also carries `g`: `{d}` 1 when `:defined`, `{v}` the custom properties set on it (names
// whose computed value differs from its parent's), for the sidecar's signature.
function (opts) {
  const F = { visible: 1, disabled: 2, focused: 4, required: 8, selected: 16, readonly: 32, pressed: 64,
    invalid: 128, secret: 256, filled: 512, hostText: 1024, ignored: 2048, shadow: 4096 };
  const MAX_NAME = 400;
  const sig = !!(opts && opts.sig);
  const ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell checkbox code ' +
    'columnheader combobox complementary contentinfo definition deletion dialog directory document emphasis feed ' +
    'figure form generic grid gridcell group heading img insertion link list listbox listitem log main mark marquee ' +
    'math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option paragraph ' +
    'presentation progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator ' +
    'slider spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer ' +
    'toolbar tooltip tree treegrid treeitem').split(' '));
  // Roles whose name comes from their content (ARIA 1.2 "name from: contents").
  const FROM_CONTENT = new Set(['button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading', 'link',
    'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'row', 'rowheader', 'switch', 'tab',
    'tooltip', 'treeitem']);
  const CHECKABLE = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
  const SELECTABLE = new Set(['option', 'tab', 'gridcell', 'row', 'treeitem', 'columnheader', 'rowheader']);
  const BLOCK = /^(block|flex|grid|table|list-item|flow-root|table-row|table-cell|table-caption)/;
  const activeEl = (() => {
    if (!document.hasFocus()) return null;
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  })();

  const attr = (el, n) => el.getAttribute(n);
  const tagOf = el => el.localName;
  const typeOf = el => (attr(el, 'type') || '').toLowerCase();
  // Children in the flat tree: an open shadow root's, a slot's assigned nodes (else its
  // fallback content), else the element's own.
  const kids = n => {
    if (n.nodeType === 1) {
      if (n.shadowRoot) return n.shadowRoot.childNodes;
      if (n.localName === 'slot') {
        const a = n.assignedNodes();
        if (a.length) return a;
      }
    }
    return n.childNodes;
  };
  const byId = (el, id) => {
    const r = el.getRootNode();
    return r.getElementById ? r.getElementById(id) : null;
  };

  // The element's role: a valid explicit token first, else its implicit role ('' = generic).
  function roleOf(el) {
    const explicit = attr(el, 'role');
    if (explicit) {
      for (const t of explicit.trim().toLowerCase().split(/\s+/)) {
        if (ROLES.has(t)) return t === 'presentation' || t === 'none' || t === 'generic' ? '' : t;
      }
    }
    const tag = tagOf(el);
    switch (tag) {
      case 'a': case 'area': return el.hasAttribute('href') ? 'link' : '';
      case 'button': return 'button';
      case 'summary': return 'button';
      case 'input': {
        const t = typeOf(el);
        if (t === 'button' || t === 'submit' || t === 'reset' || t === 'image' || t === 'file' || t === 'color') return 'button';
        if (t === 'checkbox') return 'checkbox';
        if (t === 'radio') return 'radio';
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'hidden') return '';
        if (el.hasAttribute('list')) return 'combobox';
        if (t === 'search') return 'searchbox';
        return 'textbox';
      }
      case 'textarea': return 'textbox';
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'option': return 'option';
      case 'optgroup': case 'fieldset': case 'details': return 'group';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'img': return attr(el, 'alt') === '' && !el.hasAttribute('title') ? '' : 'img';
      case 'ul': case 'ol': case 'menu': return 'list';
      case 'li': return 'listitem';
      case 'dl': return 'list';
      case 'table': return 'table';
      case 'tr': return 'row';
      case 'td': return 'cell';
      case 'th': {
        // A header of its row when the row holds data cells, else of its column.
        const scope = (attr(el, 'scope') || '').toLowerCase();
        if (scope === 'row' || scope === 'col') return scope === 'row' ? 'rowheader' : 'columnheader';
        return el.parentElement && el.parentElement.querySelector(':scope > td') ? 'rowheader' : 'columnheader';
      }
      case 'dialog': return 'dialog';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'aside': return 'complementary';
      case 'article': return 'article';
      case 'header': case 'footer':
        return el.parentElement && el.parentElement.closest('article,aside,main,nav,section') ? ''
          : tag === 'header' ? 'banner' : 'contentinfo';
      case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : '';
      case 'form': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'form' : '';
      case 'p': return 'paragraph';
      case 'blockquote': return 'blockquote';
      case 'figure': return 'figure';
      case 'hr': return 'separator';
      case 'progress': return 'progressbar';
      case 'meter': return 'meter';
      case 'output': return 'status';
      case 'iframe': case 'frame': return 'Iframe';
      default: return '';
    }
  }

  // An open modal dialog makes the rest of its document inert (HTML: "blocked by a modal
  // dialog"); the topmost one counts.
  const modals = document.querySelectorAll('dialog:modal');
  const modal = modals.length ? modals[modals.length - 1] : null;

  // Not rendered for the accessibility tree: the element and all it holds are left out
  // (inert: the attribute on it, what sits outside an open modal dialog).
  function excluded(el, st) {
    return st.display === 'none' || attr(el, 'aria-hidden') === 'true' || el.inert
      || (modal !== null && !el.contains(modal) && !within(modal, el));
  }
  // True if `el` is `a` or inside it, across shadow roots.
  function within(a, el) {
    for (let n = el; n; n = n.parentNode || n.host) if (n === a) return true;
    return false;
  }

  // The computed properties the walk reads of element `el`. A name from content reads its
  // children's before the walk visits them: those are kept (`styleOf`) for the visit, as each
  // read of a live CSSStyleDeclaration costs a style lookup. The visit itself keeps none: a
  // Map keyed by every element (its identity hash made for each) was a sixth of the walk.
  function readStyle(el) {
    const cs = getComputedStyle(el);
    return { display: cs.display, visibility: cs.visibility, opacity: cs.opacity, contentVisibility: cs.contentVisibility };
  }
  const styles = new Map();
  function styleOf(el) {
    let st = styles.get(el);
    if (!st) {
      st = readStyle(el);
      styles.set(el, st);
    }
    return st;
  }

  // Text of the choice of a select (its selected options' labels).
  const chosen = el => Array.from(el.selectedOptions || [], o => o.label || o.text).join(' ');

  // The value an embedded control gives a name it is part of (accname 2E).
  function embedded(el, role) {
    if (role === 'textbox' || role === 'searchbox') return tagOf(el) === 'input' || tagOf(el) === 'textarea' ? el.value : el.textContent;
    if (role === 'combobox' || role === 'listbox') return tagOf(el) === 'select' ? chosen(el) : (el.value ?? '');
    if (role === 'slider' || role === 'spinbutton') return attr(el, 'aria-valuetext') || attr(el, 'aria-valuenow') || (el.value ?? '');
    return null;
  }

  // The labels of control `el` in tree order (what `el.labels` gives: HTML "labeled
  // control"), from its tree scope's <label>s read once per walk. `el.labels` itself makes
  // Chromium search the whole tree on its first read for each control: on a page of 20,000
  // buttons that was over 10 s of the first snapshot.
  const labelsIn = new Map();
  function labelsOf(el) {
    const scope = el.getRootNode();
    let byControl = labelsIn.get(scope);
    if (!byControl) {
      byControl = new Map();
      for (const l of scope.querySelectorAll ? scope.querySelectorAll('label') : []) {
        const c = l.control;
        if (!c) continue;
        const list = byControl.get(c);
        if (list) list.push(l);
        else byControl.set(c, [l]);
      }
      labelsIn.set(scope, byControl);
    }
    return byControl.get(el) || [];
  }

  // Accessible name (accname 1.2, the steps a page needs): aria-labelledby, aria-label, the
  // host language's label (label elements, alt, value of button inputs, legend, caption,
  // title of frames), name from content for the roles that allow it, title, placeholder.
  // `ctx`: {root, labelledby (inside a labelledby traversal: hidden referenced nodes count),
  // seen (elements already named on this path)}.
  function name(el, role, ctx, scope) {
    const inner = !!ctx;
    // `seen`: the elements named on this path, a short stack (a Set hashed every named element).
    // `scope`: the root's tree scope, when the walk knows it.
    ctx = ctx || { root: el, labelledby: false, seen: [], scope };
    if (ctx.seen.includes(el)) return '';
    ctx.seen.push(el);
    try {
      if (!ctx.labelledby) {
        const ids = attr(el, 'aria-labelledby');
        if (ids) {
          const parts = [];
          for (const id of ids.trim().split(/\s+/)) {
            const r = byId(el, id);
            if (r) parts.push(name(r, roleOf(r), { root: ctx.root, labelledby: true, seen: ctx.seen }));
          }
          const t = parts.join(' ').trim();
          if (t) return t;
        }
      }
      // An embedded control inside a label of another control gives its value.
      if (inner && el !== ctx.root) {
        const v = embedded(el, role);
        if (v !== null) return v;
      }
      const label = attr(el, 'aria-label');
      if (label && label.trim()) return label.trim();
      const tag = tagOf(el);
      if (tag === 'input') {
        const t = typeOf(el);
        if (t === 'button' || t === 'submit' || t === 'reset') {
          return el.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
        }
        if (t === 'image') return attr(el, 'alt') || attr(el, 'value') || 'Submit';
      }
      const labels = inner && el !== ctx.root ? [] : labelsOf(el);
      if (labels.length) {
        const t = labels.map(l => content(l, { root: ctx.root, labelledby: ctx.labelledby, seen: ctx.seen })).join(' ').trim();
        if (t) return t;
      }
      if (tag === 'img' || tag === 'area') {
        const alt = attr(el, 'alt');
        if (alt) return alt;
      }
      if (tag === 'fieldset') {
        const lg = Array.from(el.children).find(c => tagOf(c) === 'legend');
        if (lg) { const t = content(lg, ctx).trim(); if (t) return t; }
      }
      if (tag === 'figure') {
        const fc = Array.from(el.children).find(c => tagOf(c) === 'figcaption');
        if (fc) { const t = content(fc, ctx).trim(); if (t) return t; }
      }
      if (tag === 'table') {
        const cap = el.caption;
        if (cap) { const t = content(cap, ctx).trim(); if (t) return t; }
      }
      if (tag === 'svg') {
        const ti = Array.from(el.children).find(c => tagOf(c) === 'title');
        if (ti && ti.textContent.trim()) return ti.textContent.trim();
      }
      if (inner || FROM_CONTENT.has(role)) {
        const t = content(el, ctx).trim();
        if (t) return t;
      }
      const title = attr(el, 'title');
      if (title && title.trim()) return title.trim();
      if (!inner && (tag === 'input' || tag === 'textarea')) {
        const ph = attr(el, 'placeholder');
        if (ph && ph.trim()) return ph.trim();
      }
      const aph = attr(el, 'aria-placeholder');
      if (!inner && aph && aph.trim()) return aph.trim();
      return '';
    } finally {
      ctx.seen.pop();
    }
  }

  // The text of `el`'s ::before or ::after (CSS generated content; accname 1.2 step 2F.ii
  // counts it). '' when there is no such box. Kept for the walk: a named element's name and
  // its outline line both ask, and a pseudo-element's computed style is the walk's dearest
  // read (on a 20,000-button page, half of its time).
  const generatedSeen = new Map();
  function generated(el, which, scope) {
    if (!pseudoIn(el, scope)) return '';
    const key = which === '::before' ? 0 : 1;
    let kept = generatedSeen.get(el);
    if (kept && kept[key] !== undefined) return kept[key];
    const cs = getComputedStyle(el, which);
    const c = cs.content;
    const text = !c || c === 'none' || c === 'normal' || cs.display === 'none' ? '' : contentText(el, c);
    if (!kept) generatedSeen.set(el, (kept = [undefined, undefined]));
    kept[key] = text;
    return text;
  }
  // Whether a ::before or ::after with content may exist in `el`'s tree scope: only an
  // author rule whose selector names one can make one (Chromium's own stylesheet gives none
  // with text), so a scope whose style sheets (its own and its hosts' scopes', adopted ones,
  // @import and nested rules included) name none skips the computed style of every
  // pseudo-element. A sheet that cannot be read (another origin's) counts as naming one.
  const pseudoScopes = new Map();
  const PSEUDO = /:(before|after)\b/i;
  function sheetsName(sheets, depth) {
    for (const sh of sheets) {
      let rules;
      try { rules = sh.cssRules; } catch (_) { return true; }
      if (!rules) return true;
      if (rulesName(rules, depth)) return true;
    }
    return false;
  }
  function rulesName(rules, depth) {
    if (depth > 16) return true;
    for (const r of rules) {
      if (r.selectorText !== undefined && PSEUDO.test(r.selectorText)) return true;
      if (r.styleSheet && sheetsName([r.styleSheet], depth + 1)) return true;
      if (r.cssRules && r.cssRules.length && rulesName(r.cssRules, depth + 1)) return true;
    }
    return false;
  }
  // `scope`: `el`'s root node, when the caller knows it (getRootNode climbs to it).
  function pseudoIn(el, scope) {
    scope = scope || el.getRootNode();
    let v = pseudoScopes.get(scope);
    if (v === undefined) {
      const own = [...(scope.styleSheets || []), ...(scope.adoptedStyleSheets || [])];
      v = sheetsName(own, 0) || (scope.host ? pseudoIn(scope.host) : false);
      pseudoScopes.set(scope, v);
    }
    return v;
  }
  // A computed `content` value as text: its quoted strings and attr() values in order, or,
  // when it gives an alternative text after "/" (CSS Generated Content 3), that instead.
  // Other functions (url(), counter(), image-set()…) and keywords give none; icon-font
  // glyphs (Private Use Area) are dropped, and so is punctuation left beside a counter
  // whose number the page cannot tell us ("1. " becomes nothing, not ". ").
  function contentText(el, c) {
    let out = '';
    let counted = false;
    // A CSS string at c[i] (a quote): its value and the index past it. A backslash escapes a
    // character or starts up to 6 hex digits and one optional space (CSS Syntax 3, 4.3.7).
    const string = (i) => {
      const q = c[i++];
      let v = '';
      while (i < c.length && c[i] !== q) {
        if (c[i] === '\\') {
          const hex = /^[0-9a-fA-F]{1,6} ?/.exec(c.slice(i + 1, i + 8));
          if (hex) { v += String.fromCodePoint(parseInt(hex[0], 16) || 0xFFFD); i += 1 + hex[0].length; }
          else { v += c[i + 1] || ''; i += 2; }
        } else v += c[i++];
      }
      return [v, i + 1];
    };
    for (let i = 0; i < c.length;) {
      const ch = c[i];
      if (ch === '"' || ch === "'") {
        const [v, next] = string(i);
        out += v;
        i = next;
      } else if (ch === '/') {
        return contentText(el, c.slice(i + 1));
      } else if (/[A-Za-z-]/.test(ch)) {
        const fn = /^[A-Za-z-]+\(/.exec(c.slice(i));
        if (!fn) { i++; while (i < c.length && /[A-Za-z0-9-]/.test(c[i])) i++; continue; }
        // To the matching ")", past strings and nested brackets.
        let j = i + fn[0].length, depth = 1;
        const args = j;
        while (j < c.length && depth > 0) {
          if (c[j] === '"' || c[j] === "'") { j = string(j)[1]; continue; }
          if (c[j] === '(') depth++;
          else if (c[j] === ')') depth--;
          j++;
        }
        const name = fn[0].slice(0, -1).toLowerCase();
        if (name === 'attr') out += attr(el, c.slice(args, j - 1).trim().split(/[\s,]+/)[0]) || '';
        else if (name === 'counter' || name === 'counters') counted = true;
        i = j;
      } else i++;
    }
    out = out.replace(/[\uE000-\uF8FF]|[\u{F0000}-\u{10FFFF}]/gu, '');
    return counted && !/[\p{L}\p{N}]/u.test(out) ? '' : out;
  }

  // The text of what an element holds (accname 2F), hidden nodes skipped unless reached
  // through aria-labelledby. Block boxes are separated by spaces.
  function content(el, ctx) {
    const scope = el === ctx.root ? ctx.scope : undefined;
    let out = generated(el, '::before', scope);
    const list = kids(el);
    for (let k = 0; k < list.length; k++) {
      const c = list[k];
      if (out.length > MAX_NAME) break;
      if (c.nodeType === 3) { out += c.data; continue; }
      if (c.nodeType !== 1) continue;
      if (ctx.seen.includes(c)) continue;
      // The control a label names is not part of its own name.
      if (c === ctx.root) continue;
      const st = styleOf(c);
      const hidden = excluded(c, st) || st.visibility !== 'visible';
      if (hidden && !ctx.labelledby) continue;
      if (c.localName === 'br') { out += ' '; continue; }
      const t = name(c, roleOf(c), ctx);
      out += BLOCK.test(st.display) ? ' ' + t + ' ' : t;
    }
    out += generated(el, '::after', scope);
    return out.replace(/\s+/g, ' ');
  }

  const self = this && this.nodeType ? this : document;
  const out = [];
  // The elements with aria-owns, resolved after the walk (what they own may come later)
  // against the walked elements and their indices (two arrays: a Map keyed by every element
  // costs an identity hash each, and few pages have aria-owns).
  const owners = [];
  const walked = [];
  const walkedAt = [];
  const start = self.nodeType === 9 ? self.documentElement : null;
  // Form controls that can be :disabled.
  const FORM = new Set(['button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset']);
  // Visits node `n` (parent index `p`); `see`: no ancestor is at opacity 0; `lit`: the
  // parent's visibility is visible (text shows it); `held`: an ancestor has
  // aria-disabled="true" (ARIA 1.2: it disables what it holds); `scope`: `n`'s root node
  // (a document or shadow root).
  function visit(n, p, see, lit, held, scope) {
    if (n.nodeType === 3) {
      const s = n.data;
      if (lit && /\S/.test(s)) out.push({ p, s: s.replace(/\s+/g, ' ') });
      return;
    }
    if (n.nodeType !== 1) return;
    const i = out.length;
    const tag = n.localName;
    // A kept style, else the live declaration: each property is computed only when read.
    const st = (styles.size && styles.get(n)) || getComputedStyle(n);
    if (excluded(n, st)) { out.push({ p, t: n.nodeName, z: 1 }); return; }
    const e = { p, t: n.nodeName };
    out.push(e);
    walked.push(n);
    walkedAt.push(i);
    if (attr(n, 'aria-owns')) owners.push([n, e]);
    let f = 0;
    if (n.shadowRoot) f |= F.shadow;
    else if (sig && tag.includes('-')) e.g = surface(n, getComputedStyle(n));
    const shown = st.visibility === 'visible';
    if (!shown) f |= F.ignored;
    const op = see && st.opacity !== '0';
    const dis = held || attr(n, 'aria-disabled') === 'true';
    let role = roleOf(n);
    // A contenteditable's editing host takes text as a textbox does.
    if (!role && n.isContentEditable && !(n.parentElement && n.parentElement.isContentEditable)) {
      role = 'textbox';
      f |= F.hostText;
    }
    if (role && shown) {
      e.r = role;
      if (op) f |= F.visible;
      const nm = name(n, role, null, scope);
      if (nm) e.n = nm.replace(/\s+/g, ' ').trim().slice(0, MAX_NAME);
      if (dis || (FORM.has(tag) && n.matches(':disabled'))) f |= F.disabled;
      if (n === activeEl) f |= F.focused;
      if (n.required || attr(n, 'aria-required') === 'true') f |= F.required;
      if ((tag === 'option' && n.selected) || (SELECTABLE.has(role) && attr(n, 'aria-selected') === 'true')) f |= F.selected;
      if (((tag === 'input' || tag === 'textarea') && n.readOnly && (role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'combobox'))
        || attr(n, 'aria-readonly') === 'true') f |= F.readonly;
      if (attr(n, 'aria-pressed') === 'true') f |= F.pressed;
      const inv = attr(n, 'aria-invalid');
      if (inv && inv !== 'false') f |= F.invalid;
      if (CHECKABLE.has(role)) {
        if (tag === 'input' && (n.type === 'checkbox' || n.type === 'radio')) e.c = n.indeterminate ? 'mixed' : String(n.checked);
        else { const c = attr(n, 'aria-checked'); e.c = c === 'true' || c === 'mixed' ? c : 'false'; }
      }
      const ex = attr(n, 'aria-expanded');
      if (ex === 'true' || ex === 'false') e.x = ex === 'true';
      else if (role === 'combobox') e.x = false;
      else if (tag === 'summary' && n.parentElement && tagOf(n.parentElement) === 'details') e.x = n.parentElement.open;
      if (role === 'heading') {
        const lv = parseInt(attr(n, 'aria-level') || '', 10);
        e.l = lv > 0 ? lv : /^h[1-6]$/.test(tag) ? Number(tag[1]) : 2;
      }
      if (role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'combobox') {
        // `secretField`: secret.js, spliced before this function (walk.rs).
        const secret = secretField(n);
        const v = tag === 'select' ? chosen(n) : tag === 'input' || tag === 'textarea' ? n.value : (f & F.hostText ? n.innerText : (attr(n, 'aria-valuetext') || ''));
        if (secret) { f |= F.secret; if (v) f |= F.filled; }
        else if (v) e.v = v.slice(0, MAX_NAME);
      }
      // A text entry's own text is its value: nothing under it is walked.
      if (role === 'textbox' || role === 'searchbox' || role === 'spinbutton') {
        e.f = f;
        e.k = 1;
        return;
      }
    } else if (shown) {
      if (op) f |= F.visible;
      if (dis || (FORM.has(tag) && n.matches(':disabled'))) f |= F.disabled;
    }
    if (f) e.f = f;
    if (tag === 'iframe' || tag === 'frame') return;
    // What content-visibility: hidden skips is not rendered.
    if (st.contentVisibility === 'hidden') { e.k = 1; return; }
    // A closed <details> renders its summary only.
    const closedDetails = tag === 'details' && !n.open && !n.shadowRoot;
    let summary = false;
    pseudoText(n, '::before', i, shown, scope);
    // The flat tree's children (as `kids`, by sibling links where they are a node's own) and
    // their scope: an open shadow root's own, a slot's assigned nodes' (its host's), else ours.
    const sr = n.shadowRoot;
    const assigned = !sr && tag === 'slot' ? n.assignedNodes() : null;
    const list = assigned && assigned.length ? assigned : null;
    const inner = sr || (list && scope.host ? scope.host.getRootNode() : scope);
    for (let k = 0, c = list ? list[0] : (sr || n).firstChild; c; c = list ? list[++k] : c.nextSibling) {
      if (closedDetails && c.nodeType === 1) {
        if (!summary && c.localName === 'summary') summary = true;
        else { out.push({ p: i, t: c.nodeName, z: 1 }); continue; }
      } else if (closedDetails) continue;
      visit(c, i, op, shown, dis, inner);
    }
    pseudoText(n, '::after', i, shown, scope);
  }
  // What custom element `n` (computed style `cs`) shows of itself: see `g` above.
  function surface(n, cs) {
    const up = n.parentElement ? getComputedStyle(n.parentElement) : null;
    const v = [];
    for (let k = 0; k < cs.length; k++) {
      const p = cs[k];
      if (p.startsWith('--') && (!up || up.getPropertyValue(p) !== cs.getPropertyValue(p))) v.push(p);
    }
    return { d: n.matches(':defined') ? 1 : 0, v: v.sort().slice(0, 32) };
  }
  // The text a ::before or ::after of `n` (at index `i`) shows, as a text child of it.
  function pseudoText(n, which, i, shown, scope) {
    if (!shown) return;
    const s = generated(n, which, scope);
    if (/\S/.test(s)) out.push({ p: i, s: s.replace(/\s+/g, ' ') });
  }
  // A shadow root is no element: its children hang from index -1.
  if (self.nodeType === 11) {
    const cs = getComputedStyle(self.host);
    const held = !!self.host.closest('[aria-disabled="true"]');
    for (const c of kids(self)) visit(c, -1, cs.opacity !== '0', cs.visibility === 'visible', held, self);
  } else if (start) visit(start, -1, true, true, false, self);
  const at = owners.length ? new Map(walked.map((el, k) => [el, walkedAt[k]])) : null;
  for (const [el, e] of owners) {
    const o = [];
    for (const id of attr(el, 'aria-owns').trim().split(/\s+/)) {
      const r = byId(el, id);
      if (r && at.has(r)) o.push(at.get(r));
    }
    if (o.length) e.o = o;
  }
  return { nodes: out, title: self.nodeType === 9 ? self.title : '' };
}
