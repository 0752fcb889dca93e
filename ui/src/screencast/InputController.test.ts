import { describe, expect, it } from 'vitest';
import { type FrameScheduler, type InputHost, InputController, type InputTarget } from './InputController';

/** A DOM-less catcher: a plain EventTarget with the two members the controller uses. */
class FakeCatcher extends EventTarget implements InputTarget {
  value = '';
  captured: number[] = [];
  setPointerCapture(id: number) {
    this.captured.push(id);
  }
}

/** An event of `type` carrying `props` (defined, so read-only Event members can be set too). */
function ev(type: string, props: Record<string, unknown> = {}): Event {
  const e = new Event(type, { cancelable: true });
  for (const [k, v] of Object.entries(props)) Object.defineProperty(e, k, { value: v });
  return e;
}

const key = (type: 'keydown' | 'keyup', key: string, code: string, more: Record<string, unknown> = {}) =>
  ev(type, { key, code, keyCode: 0, isComposing: false, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...more });

const pointer = (type: string, x: number, y: number, more: Record<string, unknown> = {}) =>
  ev(type, { clientX: x, clientY: y, button: 0, buttons: 1, pointerId: 1, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...more });

/** Animation frames run when the test says. */
class Frames implements FrameScheduler {
  pending = new Map<number, () => void>();
  private n = 0;
  request(f: () => void) {
    this.pending.set(++this.n, f);
    return this.n;
  }
  cancel(h: number) {
    this.pending.delete(h);
  }
  run() {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const f of all) f();
  }
}

function setup(opts: { painted?: boolean; clipboard?: string } = {}) {
  const target = new FakeCatcher();
  const sent: Record<string, unknown>[] = [];
  const log: string[] = [];
  let zoom = 1;
  const host: InputHost = {
    pagePoint: (e) => (opts.painted === false ? undefined : { x: e.clientX * 2, y: e.clientY * 2 }),
    fit: () => ({ x: 0, y: 0, w: 500, h: 400, scale: 0.5 }),
    sendInput: (m) => sent.push(m as Record<string, unknown>),
    onPress: () => log.push('press'),
    zoom: () => zoom,
    setZoom: (f) => {
      zoom = f;
      log.push(`zoom ${f}`);
    },
    openFind: () => log.push('find'),
    openMenu: (c, p) => log.push(`menu ${c.clientX},${c.clientY} → ${p.x},${p.y}`),
    readClipboard: () => Promise.resolve(opts.clipboard ?? ''),
  };
  const frames = new Frames();
  const ctl = new InputController(target, host, frames, false);
  return { target, sent, log, frames, ctl };
}

describe('InputController', () => {
  it('a press maps to page px, takes focus and captures the pointer', () => {
    const { target, sent, log } = setup();
    const e = pointer('pointerdown', 10, 20);
    target.dispatchEvent(e);
    expect(e.defaultPrevented).toBe(true);
    expect(log).toEqual(['press']);
    expect(target.captured).toEqual([1]);
    expect(sent).toEqual([{ type: 'input_mouse', event: 'down', x: 20, y: 40, button: 'left', clicks: 1, modifiers: 0 }]);
  });

  it('moves are coalesced to one per animation frame, and a press sends the pending one first', () => {
    const { target, sent, frames } = setup();
    target.dispatchEvent(pointer('pointermove', 1, 1));
    target.dispatchEvent(pointer('pointermove', 2, 2));
    expect(sent).toEqual([]);
    frames.run();
    expect(sent.map((m) => [m.event, m.x])).toEqual([['move', 4]]);
    target.dispatchEvent(pointer('pointermove', 3, 3));
    target.dispatchEvent(pointer('pointerdown', 3, 3));
    expect(sent.map((m) => [m.event, m.x])).toEqual([
      ['move', 4],
      ['move', 6],
      ['down', 6],
    ]);
    expect(frames.pending.size).toBe(0);
  });

  it('nothing is sent for a pointer before the first frame', () => {
    const { target, sent } = setup({ painted: false });
    target.dispatchEvent(pointer('pointerdown', 1, 1));
    target.dispatchEvent(pointer('pointerup', 1, 1));
    expect(sent).toEqual([]);
  });

  it('a key up is sent only for a key whose down the page got; blur releases held keys', () => {
    const { target, sent } = setup();
    target.dispatchEvent(key('keyup', 'a', 'KeyA'));
    expect(sent).toEqual([]);
    target.dispatchEvent(key('keydown', 'a', 'KeyA'));
    target.dispatchEvent(key('keydown', 'b', 'KeyB'));
    target.dispatchEvent(key('keyup', 'a', 'KeyA'));
    expect(sent.map((m) => [m.event, m.code])).toEqual([
      ['down', 'KeyA'],
      ['down', 'KeyB'],
      ['up', 'KeyA'],
    ]);
    target.dispatchEvent(ev('blur'));
    expect(sent[3]).toEqual({ type: 'input_keyboard', event: 'up', key: 'b', code: 'KeyB', text: '', modifiers: 0 });
    target.dispatchEvent(ev('blur'));
    expect(sent.length).toBe(4);
  });

  it('zoom chords zoom and are not sent to the page', () => {
    const { target, sent, log } = setup();
    target.dispatchEvent(key('keydown', '=', 'Equal', { ctrlKey: true }));
    expect(log).toEqual(['zoom 1.1']);
    expect(sent).toEqual([]);
  });

  it('the find chord opens the find bar and is not sent to the page; Ctrl+Shift+F is a key', () => {
    const { target, sent, log } = setup();
    const e = key('keydown', 'f', 'KeyF', { ctrlKey: true });
    target.dispatchEvent(e);
    expect(e.defaultPrevented).toBe(true);
    expect(log).toEqual(['find']);
    expect(sent).toEqual([]);
    target.dispatchEvent(key('keydown', 'F', 'KeyF', { ctrlKey: true, shiftKey: true }));
    expect(log).toEqual(['find']);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ type: 'input_keyboard', event: 'down', code: 'KeyF' });
  });

  it('a composition sends its committed text once, and its keys not at all', () => {
    const { target, sent } = setup();
    target.dispatchEvent(ev('compositionstart'));
    target.dispatchEvent(key('keydown', 'n', 'KeyN'));
    target.dispatchEvent(ev('input', { isComposing: true, inputType: 'insertCompositionText', data: 'に' }));
    target.value = 'に';
    target.dispatchEvent(ev('compositionend', { data: 'に' }));
    expect(sent).toEqual([{ type: 'input_text', text: 'に' }]);
    expect(target.value).toBe('');
  });

  it('text typed without a forwarded key goes as text', () => {
    const { target, sent } = setup();
    target.dispatchEvent(ev('input', { isComposing: false, inputType: 'insertText', data: 'é' }));
    expect(sent).toEqual([{ type: 'input_text', text: 'é' }]);
  });

  it('the paste chord sends the clipboard text; copy and cut are edit ops', async () => {
    const { target, sent } = setup({ clipboard: 'hello' });
    target.dispatchEvent(key('keydown', 'v', 'KeyV', { ctrlKey: true }));
    await Promise.resolve();
    await Promise.resolve();
    expect(sent).toEqual([{ type: 'input_text', text: 'hello' }]);
    target.dispatchEvent(ev('copy'));
    target.dispatchEvent(ev('cut'));
    expect(sent.slice(1)).toEqual([
      { type: 'edit', op: 'copy' },
      { type: 'edit', op: 'cut' },
    ]);
  });

  it('a context menu opens at the client point over the page point', () => {
    const { target, log } = setup();
    target.dispatchEvent(pointer('contextmenu', 5, 6));
    expect(log).toEqual(['menu 5,6 → 10,12']);
  });

  it('after dispose nothing is listened to and no frame is pending', () => {
    const { target, sent, frames, ctl } = setup();
    target.dispatchEvent(pointer('pointermove', 1, 1));
    ctl.dispose();
    expect(frames.pending.size).toBe(0);
    target.dispatchEvent(pointer('pointerdown', 1, 1));
    target.dispatchEvent(key('keydown', 'a', 'KeyA'));
    expect(sent).toEqual([]);
  });
});
