// The layout engine: a pure split tree of panes that computes rectangles.
//
// Architecture invariant: this module is pure. No React, no DOM, no timers, no globals.
// Every operation takes a state and returns a new state (inputs are never mutated); an
// operation that does not apply returns the state it was given (same object).
//
// Over 600 lines, knowingly: one algebra over one tree type (split, close, resize, swap,
// focus by direction, minimize, zoom, replace), whose operations share private tree walks;
// cut in two, each half would need the other's internals. Pinned by `engine.test.ts`.

/** A pane's stable id (chosen by the caller, never by the engine). */
export type PaneId = string;

/** `row`: children side by side, left to right; `column`: stacked top to bottom. */
export type SplitDir = 'row' | 'column';

export type LayoutNode =
  | { kind: 'leaf'; id: PaneId }
  | {
      kind: 'split';
      dir: SplitDir;
      children: LayoutNode[];
      /** relative sizes along the split's axis; same length as children, each > 0 */
      weights: number[];
    };

export interface LayoutState {
  /** the visible tree; null when no pane is visible */
  root: LayoutNode | null;
  /** minimized panes in the order they were minimized (oldest first); never in the tree */
  minimized: PaneId[];
  /** where each minimized pane stood, so restoring puts it back with its size; keys ⊆ `minimized` */
  homes: Record<PaneId, Home>;
  /**
   * The tree as it was just before each minimize still on the baseboard (oldest first), so
   * panes restored in any order rebuild it exactly while nothing else changed the wall;
   * empty once the baseboard is.
   */
  snapshots?: LayoutNode[];
  /** the zoomed pane (fills the wall) or null; always a leaf of the tree */
  zoomed: PaneId | null;
  /** the focused pane or null; always a leaf of the tree when the tree is non-empty */
  focused: PaneId | null;
}

/** A rectangle in CSS pixels (or any unit the caller chose for the wall). */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type Direction = 'left' | 'right' | 'up' | 'down';
export type SplitSide = 'right' | 'down';

/**
 * Where a minimized pane stood: beside the subtree holding exactly the panes `sibling`
 * (the neighbour that took its room), on side `side` of it, with `share` (0..1, exclusive)
 * of the room the two had together.
 */
export interface Home {
  sibling: PaneId[];
  side: Direction;
  share: number;
}

/** A draggable gap between children `index` and `index + 1` of the split at `path`. */
export interface Gap {
  /** child indices from the root to the split that owns this gap */
  path: number[];
  index: number;
  dir: SplitDir;
  rect: Rect;
}

export interface Layout {
  /** the rectangle of every visible pane */
  panes: Map<PaneId, Rect>;
  gaps: Gap[];
}

export interface LayoutOptions {
  /** gap between neighbouring panes, in the wall's unit; shrinks when space is short */
  gap: number;
}

export const EMPTY_LAYOUT: LayoutState = { root: null, minimized: [], homes: {}, zoomed: null, focused: null };

/** A layout with one pane. */
export function single(id: PaneId): LayoutState {
  return { root: { kind: 'leaf', id }, minimized: [], homes: {}, zoomed: null, focused: id };
}

// ---------------------------------------------------------------------------------------
// Queries

/** Visible pane ids in tree order (depth first, left/top first). */
export function leaves(node: LayoutNode | null): PaneId[] {
  const out: PaneId[] = [];
  const walk = (n: LayoutNode) => {
    if (n.kind === 'leaf') out.push(n.id);
    else n.children.forEach(walk);
  };
  if (node) walk(node);
  return out;
}

/** Every pane id the layout knows: visible ones in tree order, then minimized ones. */
export function allPanes(state: LayoutState): PaneId[] {
  return [...leaves(state.root), ...state.minimized];
}

/** Panes that get a rectangle: the zoomed pane alone, else every leaf. */
export function visiblePanes(state: LayoutState): PaneId[] {
  if (state.zoomed !== null) return [state.zoomed];
  return leaves(state.root);
}

export function contains(state: LayoutState, id: PaneId): boolean {
  return allPanes(state).includes(id);
}

/** The gap actually used for `n` children over `length`: at most half the room per gap, so sizes stay positive. */
function effectiveGap(length: number, n: number, gap: number): number {
  if (n <= 1) return 0;
  return Math.max(0, Math.min(gap, length / (2 * (n - 1))));
}

/** Splits `length` into `weights.length` parts separated by gaps; returns [offset, size] pairs. */
function segments(start: number, length: number, weights: number[], gap: number): Array<[number, number]> {
  const n = weights.length;
  const g = effectiveGap(length, n, gap);
  const room = length - g * (n - 1);
  const total = weights.reduce((a, b) => a + b, 0);
  const out: Array<[number, number]> = [];
  let pos = start;
  for (let i = 0; i < n; i++) {
    // The last child ends exactly at the end, so rounding never leaves a sliver.
    const size = i === n - 1 ? start + length - pos : (room * weights[i]) / total;
    out.push([pos, size]);
    pos += size + g;
  }
  return out;
}

/** Computes the rectangles of the visible panes and the gaps between them. */
export function computeLayout(state: LayoutState, wall: Rect, opts: LayoutOptions = { gap: 0 }): Layout {
  const panes = new Map<PaneId, Rect>();
  const gaps: Gap[] = [];
  if (state.zoomed !== null) {
    panes.set(state.zoomed, { ...wall });
    return { panes, gaps };
  }
  const walk = (n: LayoutNode, r: Rect, path: number[]) => {
    if (n.kind === 'leaf') {
      panes.set(n.id, r);
      return;
    }
    const horizontal = n.dir === 'row';
    const segs = segments(horizontal ? r.x : r.y, horizontal ? r.w : r.h, n.weights, opts.gap);
    segs.forEach(([pos, size], i) => {
      const child: Rect = horizontal ? { x: pos, y: r.y, w: size, h: r.h } : { x: r.x, y: pos, w: r.w, h: size };
      walk(n.children[i], child, [...path, i]);
      if (i < segs.length - 1) {
        const end = pos + size;
        const next = segs[i + 1][0];
        const gr: Rect = horizontal ? { x: end, y: r.y, w: next - end, h: r.h } : { x: r.x, y: end, w: r.w, h: next - end };
        gaps.push({ path, index: i, dir: n.dir, rect: gr });
      }
    });
  };
  if (state.root) walk(state.root, { ...wall }, []);
  return { panes, gaps };
}

// ---------------------------------------------------------------------------------------
// Tree helpers (all pure)

function normalize(node: LayoutNode): LayoutNode {
  if (node.kind === 'leaf') return node;
  const children: LayoutNode[] = [];
  const weights: number[] = [];
  node.children.forEach((c0, i) => {
    const c = normalize(c0);
    const w = node.weights[i];
    if (c.kind === 'split' && c.dir === node.dir) {
      // Flatten a same-direction child into its parent, keeping its share of the room.
      const t = c.weights.reduce((a, b) => a + b, 0);
      c.children.forEach((cc, j) => {
        children.push(cc);
        weights.push((w * c.weights[j]) / t);
      });
    } else {
      children.push(c);
      weights.push(w);
    }
  });
  if (children.length === 1) return children[0];
  return { kind: 'split', dir: node.dir, children, weights };
}

/** Removes leaf `id`; its room goes to the previous sibling (or the next when first). */
function removeLeaf(node: LayoutNode, id: PaneId): LayoutNode | null {
  if (node.kind === 'leaf') return node.id === id ? null : node;
  const idx = node.children.findIndex((c) => c.kind === 'leaf' && c.id === id);
  if (idx >= 0) {
    const children = node.children.filter((_, i) => i !== idx);
    const weights = node.weights.filter((_, i) => i !== idx);
    const heir = idx > 0 ? idx - 1 : 0;
    weights[heir] += node.weights[idx];
    if (children.length === 1) return children[0];
    return { ...node, children, weights };
  }
  let changed = false;
  const children = node.children.map((c) => {
    const r = removeLeaf(c, id);
    if (r !== c) changed = true;
    return r as LayoutNode; // a split child is never removed whole: it has ≥ 2 children
  });
  return changed ? normalize({ ...node, children }) : node;
}

function firstLeaf(node: LayoutNode | null): PaneId | null {
  const l = leaves(node);
  return l.length ? l[0] : null;
}

function without(homes: Record<PaneId, Home>, id: PaneId): Record<PaneId, Home> {
  if (!(id in homes)) return homes;
  const rest = { ...homes };
  delete rest[id];
  return rest;
}

const axisOf = (side: Direction): SplitDir => (side === 'left' || side === 'right' ? 'row' : 'column');
const isAfter = (side: Direction) => side === 'right' || side === 'down';

/** Where visible leaf `id` stands: beside the sibling that `removeLeaf` gives its room to. */
function homeOf(root: LayoutNode, id: PaneId): Home | null {
  if (root.kind === 'leaf') return null;
  const idx = root.children.findIndex((c) => c.kind === 'leaf' && c.id === id);
  if (idx < 0) {
    for (const c of root.children) {
      const h = homeOf(c, id);
      if (h) return h;
    }
    return null;
  }
  const heir = idx > 0 ? idx - 1 : 1;
  const share = root.weights[idx] / (root.weights[idx] + root.weights[heir]);
  if (!(share > 0 && share < 1)) return null;
  const after = idx > heir;
  const side: Direction = root.dir === 'row' ? (after ? 'right' : 'left') : after ? 'down' : 'up';
  return { sibling: leaves(root.children[heir]), side, share };
}

const OPPOSITE: Record<Direction, Direction> = { left: 'right', right: 'left', up: 'down', down: 'up' };

/**
 * Where minimized pane `id` goes back to, given its `home`: beside what is still visible of
 * its neighbour. When the whole neighbour is minimized too, `id` stands where that
 * neighbour would (its home), and the neighbour's home becomes "beside `id`", so restoring
 * both in either order rebuilds the split. `hops` bounds that chain. Returns the new root
 * (not normalized) and homes, or null when there is no home to go back to.
 */
function placeHome(
  root: LayoutNode,
  id: PaneId,
  home: Home | undefined,
  homes: Record<PaneId, Home>,
  hops: number,
): { root: LayoutNode; homes: Record<PaneId, Home> } | null {
  if (!home || hops < 0) return null;
  const visible = new Set(leaves(root));
  const sibling = home.sibling.filter((p) => visible.has(p));
  if (sibling.length) {
    const placed = placeBeside(root, new Set(sibling), home, id);
    return placed ? { root: placed, homes } : null;
  }
  const stand = home.sibling.find((p) => p !== id && Object.hasOwn(homes, p));
  if (!stand) return null;
  const placed = placeHome(root, id, homes[stand], homes, hops - 1);
  if (!placed) return null;
  const back: Home = { sibling: [id], side: OPPOSITE[home.side], share: 1 - home.share };
  return { root: placed.root, homes: { ...placed.homes, [stand]: back } };
}

/**
 * Puts leaf `id` beside the subtree whose panes are exactly `sibling` (a child, or a run of
 * neighbouring children that a collapse flattened into their grandparent), taking
 * `home.share` of its room. Returns null when no such subtree exists. Not normalized.
 */
function placeBeside(node: LayoutNode, sibling: Set<PaneId>, home: Home, id: PaneId): LayoutNode | null {
  const axis = axisOf(home.side);
  const leaf: LayoutNode = { kind: 'leaf', id };
  const pair = (run: LayoutNode): LayoutNode => ({
    kind: 'split',
    dir: axis,
    children: isAfter(home.side) ? [run, leaf] : [leaf, run],
    weights: isAfter(home.side) ? [1 - home.share, home.share] : [home.share, 1 - home.share],
  });
  const sameSet = (ids: PaneId[]) => ids.length === sibling.size && ids.every((p) => sibling.has(p));
  if (sameSet(leaves(node))) return pair(node);
  if (node.kind === 'leaf') return null;
  const sets = node.children.map((c) => leaves(c));
  // The run of children holding exactly the sibling's panes, if there is one.
  const first = sets.findIndex((ids) => ids.some((p) => sibling.has(p)));
  if (first >= 0) {
    let last = first;
    while (last + 1 < sets.length && sets[last + 1].every((p) => sibling.has(p))) last++;
    if (sameSet(sets.slice(first, last + 1).flat())) {
      const children = [...node.children];
      const weights = [...node.weights];
      const runWeight = weights.slice(first, last + 1).reduce((a, b) => a + b, 0);
      if (first === last && node.dir === axis) {
        const mine = runWeight * home.share;
        const at = isAfter(home.side) ? first + 1 : first;
        weights[first] = runWeight - mine;
        children.splice(at, 0, leaf);
        weights.splice(at, 0, mine);
        return { ...node, children, weights };
      }
      const run: LayoutNode =
        first === last
          ? node.children[first]
          : { kind: 'split', dir: node.dir, children: children.slice(first, last + 1), weights: weights.slice(first, last + 1) };
      children.splice(first, last - first + 1, pair(run));
      weights.splice(first, last - first + 1, runWeight);
      return { ...node, children, weights };
    }
  }
  for (let i = 0; i < node.children.length; i++) {
    const placed = placeBeside(node.children[i], sibling, home, id);
    if (placed) {
      const children = [...node.children];
      children[i] = placed;
      return { ...node, children };
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// Operations

/**
 * Splits pane `target` and puts `newId` to its right (`right`) or below it (`down`),
 * halving the target's room. The new pane gets the focus. Zoom is cleared.
 * Returns the same state when `target` is not visible or `newId` is already known.
 */
export function split(state: LayoutState, target: PaneId, side: SplitSide, newId: PaneId): LayoutState {
  if (!state.root || contains(state, newId) || !leaves(state.root).includes(target)) return state;
  const dir: SplitDir = side === 'right' ? 'row' : 'column';
  const insert = (node: LayoutNode): LayoutNode => {
    if (node.kind === 'leaf') {
      if (node.id !== target) return node;
      return { kind: 'split', dir, children: [node, { kind: 'leaf', id: newId }], weights: [1, 1] };
    }
    const idx = node.children.findIndex((c) => c.kind === 'leaf' && c.id === target);
    if (idx >= 0 && node.dir === dir) {
      const children = [...node.children];
      const weights = [...node.weights];
      const half = weights[idx] / 2;
      weights[idx] = half;
      children.splice(idx + 1, 0, { kind: 'leaf', id: newId });
      weights.splice(idx + 1, 0, half);
      return { ...node, children, weights };
    }
    return { ...node, children: node.children.map(insert) };
  };
  return { ...state, root: normalize(insert(state.root)), zoomed: null, focused: newId };
}

/**
 * Forgets pane `id` (visible or minimized). The focus moves to the pane that took its
 * room. Returns the same state when `id` is unknown.
 */
export function close(state: LayoutState, id: PaneId): LayoutState {
  if (state.minimized.includes(id)) {
    const minimized = state.minimized.filter((m) => m !== id);
    return { ...state, minimized, homes: without(state.homes, id), snapshots: forget(state.snapshots, id, minimized) };
  }
  if (!state.root || !leaves(state.root).includes(id)) return state;
  const order = leaves(state.root);
  const pos = order.indexOf(id);
  const root = removeLeaf(state.root, id);
  const rest = leaves(root);
  let focused = state.focused;
  if (focused === id || focused === null || !rest.includes(focused)) {
    focused = rest.length ? rest[Math.max(0, pos - 1)] ?? rest[0] : null;
  }
  return {
    ...state,
    root,
    zoomed: state.zoomed === id ? null : state.zoomed,
    focused,
    snapshots: forget(state.snapshots, id, state.minimized),
  };
}

/**
 * The least length along `axis` that `node` can have with every pane in it at least
 * `minSize`, given that a nested split shares its room by its current weights.
 */
function minExtent(node: LayoutNode, axis: SplitDir, opts: LayoutOptions & { minSize: number }): number {
  if (node.kind === 'leaf') return opts.minSize;
  const mins = node.children.map((c) => minExtent(c, axis, opts));
  if (node.dir !== axis) return Math.max(...mins);
  const total = node.weights.reduce((x, y) => x + y, 0);
  const room = Math.max(...mins.map((m, i) => (m * total) / node.weights[i]));
  return room + opts.gap * (node.children.length - 1);
}

/**
 * Moves the gap between children `index` and `index + 1` of the split at `path` by
 * `delta` (wall units, positive = right/down), keeping every pane inside both neighbours
 * at least `minSize` along the split's axis (or where it already is, when smaller).
 * Weights stay positive.
 */
export function resize(
  state: LayoutState,
  path: number[],
  index: number,
  delta: number,
  wall: Rect,
  opts: LayoutOptions & { minSize: number },
): LayoutState {
  if (!state.root || state.zoomed !== null || !Number.isFinite(delta) || delta === 0) return state;
  // Walk to the split, tracking its rectangle.
  let node: LayoutNode = state.root;
  let rect: Rect = wall;
  for (const i of path) {
    if (node.kind !== 'split' || i < 0 || i >= node.children.length) return state;
    const horizontal = node.dir === 'row';
    const segs = segments(horizontal ? rect.x : rect.y, horizontal ? rect.w : rect.h, node.weights, opts.gap);
    const [pos, size] = segs[i];
    rect = horizontal ? { x: pos, y: rect.y, w: size, h: rect.h } : { x: rect.x, y: pos, w: rect.w, h: size };
    node = node.children[i];
  }
  if (node.kind !== 'split' || index < 0 || index + 1 >= node.children.length) return state;
  const split = node;
  const horizontal = split.dir === 'row';
  const length = horizontal ? rect.w : rect.h;
  const n = split.weights.length;
  const room = length - effectiveGap(length, n, opts.gap) * (n - 1);
  if (!(room > 0)) return state;
  const total = split.weights.reduce((a, b) => a + b, 0);
  const a = (room * split.weights[index]) / total;
  const b = (room * split.weights[index + 1]) / total;
  const pair = a + b;
  // Each side keeps room for every pane inside it (nested splits scale with their weights).
  const lo = Math.min(minExtent(split.children[index], split.dir, opts), a);
  const hi = pair - Math.min(minExtent(split.children[index + 1], split.dir, opts), b);
  const na = Math.min(Math.max(a + delta, lo), hi);
  if (!(na > 0) || !(pair - na > 0) || Math.abs(na - a) < 1e-9) return state;
  const weights = [...split.weights];
  const pairWeight = weights[index] + weights[index + 1];
  weights[index] = (pairWeight * na) / pair;
  weights[index + 1] = pairWeight - weights[index];
  if (!(weights[index] > 0) || !(weights[index + 1] > 0)) return state;
  const replaceAt = (n0: LayoutNode, depth: number): LayoutNode => {
    if (depth === path.length) return { ...(n0 as typeof split), weights };
    const s = n0 as typeof split;
    const children = s.children.map((c, i) => (i === path[depth] ? replaceAt(c, depth + 1) : c));
    return { ...s, children };
  };
  return { ...state, root: replaceAt(state.root, 0) };
}

/** Swaps pane `id` with the previous (`prev`) or next (`next`) visible pane in tree order, wrapping. */
export function swap(state: LayoutState, id: PaneId, which: 'prev' | 'next'): LayoutState {
  const order = leaves(state.root);
  const i = order.indexOf(id);
  if (i < 0 || order.length < 2) return state;
  const j = (i + (which === 'next' ? 1 : -1) + order.length) % order.length;
  const other = order[j];
  const swapIds = (n: LayoutNode): LayoutNode => {
    if (n.kind === 'leaf') {
      if (n.id === id) return { kind: 'leaf', id: other };
      if (n.id === other) return { kind: 'leaf', id };
      return n;
    }
    return { ...n, children: n.children.map(swapIds) };
  };
  return { ...state, root: swapIds(state.root!) };
}

/** Focuses visible pane `id`; focusing another pane than the zoomed one ends the zoom (as tmux does). */
export function focus(state: LayoutState, id: PaneId): LayoutState {
  if (state.focused === id || !leaves(state.root).includes(id)) return state;
  return { ...state, focused: id, zoomed: state.zoomed === id ? id : null };
}

/** Focuses the next visible pane in tree order (wrapping). */
export function focusNext(state: LayoutState): LayoutState {
  const order = leaves(state.root);
  if (order.length < 2) return state;
  const i = state.focused === null ? -1 : order.indexOf(state.focused);
  return focus(state, order[(i + 1) % order.length]);
}

/**
 * Focuses the nearest pane in `dir` from the focused one: among panes entirely beyond the
 * focused pane's edge that overlap it on the other axis, the closest; ties go to the one
 * overlapping most, then to the one nearest to its top/left.
 */
export function focusDirection(state: LayoutState, dir: Direction, wall: Rect = { x: 0, y: 0, w: 1, h: 1 }): LayoutState {
  if (state.focused === null || !state.root) return state;
  const rects = computeLayout({ ...state, zoomed: null }, wall, { gap: 0 }).panes;
  const from = rects.get(state.focused);
  if (!from) return state;
  const eps = 1e-7 * Math.max(wall.w, wall.h, 1);
  let best: { id: PaneId; dist: number; overlap: number; lead: number } | null = null;
  for (const [id, r] of rects) {
    if (id === state.focused) continue;
    let dist: number;
    let overlap: number;
    let lead: number;
    if (dir === 'left' || dir === 'right') {
      dist = dir === 'right' ? r.x - (from.x + from.w) : from.x - (r.x + r.w);
      overlap = Math.min(from.y + from.h, r.y + r.h) - Math.max(from.y, r.y);
      lead = r.y;
    } else {
      dist = dir === 'down' ? r.y - (from.y + from.h) : from.y - (r.y + r.h);
      overlap = Math.min(from.x + from.w, r.x + r.w) - Math.max(from.x, r.x);
      lead = r.x;
    }
    if (dist < -eps || overlap <= eps) continue;
    const better =
      !best ||
      dist < best.dist - eps ||
      (Math.abs(dist - best.dist) <= eps &&
        (overlap > best.overlap + eps || (Math.abs(overlap - best.overlap) <= eps && lead < best.lead)));
    if (better) best = { id, dist, overlap, lead };
  }
  return best ? focus(state, best.id) : state;
}

/** Toggles zoom on pane `id` (default: the focused pane). Zooming also focuses it. */
export function toggleZoom(state: LayoutState, id: PaneId | null = state.focused): LayoutState {
  if (id === null) return state;
  if (state.zoomed === id) return { ...state, zoomed: null };
  if (!leaves(state.root).includes(id)) return state;
  if (leaves(state.root).length < 2) return state.zoomed === null ? state : { ...state, zoomed: null };
  return { ...state, zoomed: id, focused: id };
}

/**
 * Minimizes visible pane `id`: it leaves the tree and joins the baseboard, remembering
 * where it stood (see `restore`). The last visible pane cannot be minimized (returns the
 * same state).
 */
export function minimize(state: LayoutState, id: PaneId): LayoutState {
  const order = leaves(state.root);
  if (!order.includes(id) || order.length < 2) return state;
  const home = homeOf(state.root!, id);
  const closed = close(state, id);
  const homes = home ? { ...state.homes, [id]: home } : state.homes;
  const snapshots = [...(state.snapshots ?? []), state.root!];
  return { ...closed, minimized: [...state.minimized, id], homes, snapshots };
}

/**
 * Restores minimized pane `id` where it stood when it was minimized, with the same share
 * of its neighbour's room, as long as a pane of that neighbour is still visible, or where
 * that neighbour would stand when it is minimized too (see `placeHome`); otherwise beside
 * the focused pane (to its right). On an empty wall it becomes the whole wall. The
 * restored pane gets the focus; zoom is cleared.
 */
export function restore(state: LayoutState, id: PaneId): LayoutState {
  if (!state.minimized.includes(id)) return state;
  const minimized = state.minimized.filter((m) => m !== id);
  const homes = without(state.homes, id);
  // Kept while they hold a pane still on the baseboard.
  const held = state.snapshots?.filter((n) => leaves(n).some((p) => minimized.includes(p)));
  const snapshots = held?.length ? held : undefined;
  if (!state.root) return { ...state, minimized, homes, snapshots, root: { kind: 'leaf', id }, focused: id, zoomed: null };
  const rebuilt = fromSnapshot(state, id, minimized);
  if (rebuilt) return { ...state, minimized, homes, snapshots, root: rebuilt, focused: id, zoomed: null };
  const placed = placeHome(state.root, id, state.homes[id], homes, state.minimized.length);
  if (placed) return { ...state, minimized, homes: placed.homes, snapshots, root: normalize(placed.root), focused: id, zoomed: null };
  const target = state.focused ?? firstLeaf(state.root)!;
  return split({ ...state, minimized, homes, snapshots }, target, 'right', id);
}

/**
 * The wall with `id` back, rebuilt from the newest snapshot that holds it and that, with
 * every minimized pane taken out, is exactly the wall now (nothing but minimizes and
 * restores happened since): that snapshot minus the panes still minimized (`others`).
 */
function fromSnapshot(state: LayoutState, id: PaneId, others: PaneId[]): LayoutNode | null {
  for (const snap of [...(state.snapshots ?? [])].reverse()) {
    if (!leaves(snap).includes(id)) continue;
    const now = removeAll(snap, [...others, id]);
    if (now && state.root && sameTree(now, state.root)) return removeAll(snap, others);
  }
  return null;
}

/**
 * `node` without the leaves `ids`, normalized. Each removed child's room goes to its nearest
 * kept sibling before it, else after it (as `removeLeaf` gives it), within its own split:
 * the result does not depend on the order the panes left in.
 */
function removeAll(node: LayoutNode, ids: PaneId[]): LayoutNode | null {
  const gone = new Set(ids);
  const prune = (n: LayoutNode): LayoutNode | null => {
    if (n.kind === 'leaf') return gone.has(n.id) ? null : n;
    const kept = n.children.map(prune);
    const weights = [...n.weights];
    kept.forEach((k, i) => {
      if (k) return;
      let heir = -1;
      for (let j = i - 1; j >= 0 && heir < 0; j--) if (kept[j]) heir = j;
      for (let j = i + 1; j < kept.length && heir < 0; j++) if (kept[j]) heir = j;
      if (heir >= 0) weights[heir] += weights[i];
    });
    const children = kept.filter((k): k is LayoutNode => k !== null);
    if (children.length === 0) return null;
    if (children.length === 1) return children[0];
    return { ...n, children, weights: weights.filter((_, i) => kept[i] !== null) };
  };
  const n = prune(node);
  return n ? normalize(n) : null;
}

/** Same shape, same panes, and the same shares at every split (up to float noise). */
function sameTree(a: LayoutNode, b: LayoutNode): boolean {
  if (a.kind === 'leaf' || b.kind === 'leaf') return a.kind === b.kind && (a as { id: PaneId }).id === (b as { id: PaneId }).id;
  if (a.dir !== b.dir || a.children.length !== b.children.length) return false;
  const ta = a.weights.reduce((x, y) => x + y, 0);
  const tb = b.weights.reduce((x, y) => x + y, 0);
  return a.children.every((c, i) => Math.abs(a.weights[i] / ta - b.weights[i] / tb) < 1e-9 && sameTree(c, b.children[i]));
}

/** Snapshots without pane `id` (closed for good), and without those no minimized pane needs. */
function forget(snapshots: LayoutNode[] | undefined, id: PaneId, minimized: PaneId[]): LayoutNode[] | undefined {
  if (!snapshots?.length) return snapshots;
  const kept = snapshots
    .map((n) => (leaves(n).includes(id) ? removeAll(n, [id]) : n))
    .filter((n): n is LayoutNode => n !== null && leaves(n).some((p) => minimized.includes(p)));
  return kept.length ? kept : undefined;
}

/** Adds pane `id` to the wall: beside the focused pane (right), or as the whole wall when empty. */
export function add(state: LayoutState, id: PaneId, side: SplitSide = 'right'): LayoutState {
  if (contains(state, id)) return state;
  if (!state.root) return { ...state, root: { kind: 'leaf', id }, focused: id, zoomed: null };
  return split(state, state.focused ?? firstLeaf(state.root)!, side, id);
}

/**
 * Puts pane `newId` where pane `oldId` is (same place in the tree, or on the baseboard), and
 * forgets `oldId`. Focus and zoom follow. Returns the same state when `oldId` is unknown or
 * `newId` is already known.
 */
export function replace(state: LayoutState, oldId: PaneId, newId: PaneId): LayoutState {
  if (!contains(state, oldId) || contains(state, newId)) return state;
  const swapLeaf = (n: LayoutNode): LayoutNode => {
    if (n.kind === 'leaf') return n.id === oldId ? { kind: 'leaf', id: newId } : n;
    return { ...n, children: n.children.map(swapLeaf) };
  };
  const same = (id: PaneId | null) => (id === oldId ? newId : id);
  const homes: Record<PaneId, Home> = {};
  for (const [m, h] of Object.entries(state.homes)) {
    homes[m === oldId ? newId : m] = { ...h, sibling: h.sibling.map((p) => (p === oldId ? newId : p)) };
  }
  return {
    root: state.root ? swapLeaf(state.root) : null,
    minimized: state.minimized.map((m) => (m === oldId ? newId : m)),
    homes,
    ...(state.snapshots ? { snapshots: state.snapshots.map(swapLeaf) } : {}),
    zoomed: same(state.zoomed),
    focused: same(state.focused),
  };
}

/** Keeps only the panes for which `keep` returns true. */
export function prune(state: LayoutState, keep: (id: PaneId) => boolean): LayoutState {
  let s = state;
  for (const id of allPanes(state)) if (!keep(id)) s = close(s, id);
  return s;
}

// ---------------------------------------------------------------------------------------
// Invariants and parsing

/** Returns a list of broken invariants (empty when the state is sound). */
export function checkInvariants(state: LayoutState): string[] {
  const errors: string[] = [];
  const seen = new Set<PaneId>();
  const walk = (n: LayoutNode, parentDir: SplitDir | null) => {
    if (n.kind === 'leaf') {
      if (typeof n.id !== 'string') errors.push('leaf id is not a string');
      if (seen.has(n.id)) errors.push(`pane ${n.id} appears twice`);
      seen.add(n.id);
      return;
    }
    if (n.children.length < 2) errors.push('split with fewer than two children');
    if (n.children.length !== n.weights.length) errors.push('weights and children differ in length');
    if (n.dir === parentDir) errors.push('split nested in a split of the same direction');
    n.weights.forEach((w) => {
      if (!(w > 0) || !Number.isFinite(w)) errors.push(`weight ${w} is not positive`);
    });
    n.children.forEach((c) => walk(c, n.dir));
  };
  if (state.root) walk(state.root, null);
  for (const m of state.minimized) {
    if (seen.has(m)) errors.push(`pane ${m} is both minimized and in the tree`);
    seen.add(m);
  }
  if (state.minimized.length !== new Set(state.minimized).size) errors.push('minimized pane listed twice');
  for (const [m, h] of Object.entries(state.homes)) {
    if (!state.minimized.includes(m)) errors.push(`pane ${m} has a home but is not minimized`);
    if (!(h.share > 0 && h.share < 1) || h.sibling.length === 0) errors.push(`pane ${m} has an unsound home`);
  }
  const visible = leaves(state.root);
  if (state.zoomed !== null && !visible.includes(state.zoomed)) errors.push('zoomed pane is not in the tree');
  if (state.focused !== null && !visible.includes(state.focused)) errors.push('focused pane is not in the tree');
  if (state.focused === null && visible.length > 0) errors.push('no focused pane');
  return errors;
}

function parseNode(v: unknown, depth: number): LayoutNode | null {
  if (depth > 64 || typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.kind === 'leaf') return typeof o.id === 'string' && o.id.length > 0 ? { kind: 'leaf', id: o.id } : null;
  if (o.kind !== 'split' || (o.dir !== 'row' && o.dir !== 'column')) return null;
  if (!Array.isArray(o.children) || !Array.isArray(o.weights) || o.children.length !== o.weights.length) return null;
  const children: LayoutNode[] = [];
  for (const c of o.children) {
    const p = parseNode(c, depth + 1);
    if (!p) return null;
    children.push(p);
  }
  const weights = o.weights.map(Number);
  if (weights.some((w) => !(w > 0) || !Number.isFinite(w))) return null;
  if (children.length === 0) return null;
  return { kind: 'split', dir: o.dir, children, weights };
}

/** Keeps the sound snapshots that hold a minimized pane; a lost one only means a plainer restore. */
function parseSnapshots(v: unknown, minimized: PaneId[]): { snapshots?: LayoutNode[] } {
  if (!Array.isArray(v)) return {};
  const kept: LayoutNode[] = [];
  for (const n of v.slice(0, 64)) {
    const p = parseNode(n, 0);
    if (!p) continue;
    const ids = leaves(p);
    if (new Set(ids).size === ids.length && ids.some((m) => minimized.includes(m))) kept.push(normalize(p));
  }
  return kept.length ? { snapshots: kept } : {};
}

/** Keeps the sound homes of minimized panes; a lost home only means a plainer restore. */
function parseHomes(v: unknown, minimized: PaneId[]): Record<PaneId, Home> {
  const homes: Record<PaneId, Home> = {};
  if (typeof v !== 'object' || v === null) return homes;
  const sides: Direction[] = ['left', 'right', 'up', 'down'];
  for (const m of minimized) {
    if (m === '__proto__' || !Object.hasOwn(v, m)) continue;
    const h = (v as Record<string, unknown>)[m];
    if (typeof h !== 'object' || h === null) continue;
    const { sibling, side, share } = h as Record<string, unknown>;
    if (!Array.isArray(sibling) || sibling.length === 0 || !sibling.every((p) => typeof p === 'string')) continue;
    if (!sides.includes(side as Direction) || typeof share !== 'number' || !(share > 0 && share < 1)) continue;
    homes[m] = { sibling: [...sibling] as PaneId[], side: side as Direction, share };
  }
  return homes;
}

/** Parses an untrusted value (e.g. a saved workspace) into a sound state, or null. */
export function parseLayout(v: unknown): LayoutState | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const root = o.root === null ? null : parseNode(o.root, 0);
  if (o.root !== null && root === null) return null;
  const minimized = Array.isArray(o.minimized) ? o.minimized.filter((m): m is string => typeof m === 'string') : [];
  const state: LayoutState = {
    root: root ? normalize(root) : null,
    minimized,
    homes: parseHomes(o.homes, minimized),
    ...parseSnapshots(o.snapshots, minimized),
    zoomed: typeof o.zoomed === 'string' ? o.zoomed : null,
    focused: typeof o.focused === 'string' ? o.focused : null,
  };
  const visible = leaves(state.root);
  if (state.zoomed !== null && !visible.includes(state.zoomed)) state.zoomed = null;
  if (state.focused === null || !visible.includes(state.focused)) state.focused = visible[0] ?? null;
  return checkInvariants(state).length === 0 ? state : null;
}
