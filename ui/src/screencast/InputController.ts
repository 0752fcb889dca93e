// The screencast's DOM input: pointer, wheel, keys, IME composition and clipboard events on
// the input catcher, turned into viewer messages (protocol §8.4 `input_*`, `edit`). Owns the
// keys held down, the click counter, the composition flag and the pending pointer move (one
// per animation frame). Knows nothing of the socket beyond `send`/`sendInput`, nor of the
// canvas beyond `pagePoint`; tests drive it with a plain `EventTarget`.
import { readClipboard } from '../clipboard';
import { DisposableStore } from '../lifecycle/disposable';
import { ClickCounter, type FitRect, buttonName, editChord, heldButton, keyMessage, modifiers, textChunks, wheelPx } from './input';
import { findChord } from './find';
import { zoomChord } from './zoom';

/** The element input is caught on (the catcher textarea; an `EventTarget` in tests). */
export interface InputTarget extends EventTarget {
  value: string;
  setPointerCapture(pointerId: number): void;
}

/** What the controller needs from the rest of the screencast. */
export interface InputHost {
  /** page CSS px for a pointer event, undefined before the first frame */
  pagePoint(e: { clientX: number; clientY: number }): { x: number; y: number } | undefined;
  /** the current frame's fit (for a wheel's page height) */
  fit(): FitRect | undefined;
  /** an input message, in order */
  sendInput(m: object): void;
  /** a pointer was pressed on the page: the pane takes focus */
  onPress(): void;
  /** the page zoom now, and a zoom key's answer */
  zoom(): number;
  setZoom(factor: number): void;
  /** the find chord (Ctrl+F, ⌘F on a Mac) was pressed: the pane opens its find bar */
  openFind(): void;
  /** a context menu asked for at this client point, over this page point */
  openMenu(client: { clientX: number; clientY: number }, page: { x: number; y: number }): void;
  /** the clipboard's text (for a paste chord) */
  readClipboard?: () => Promise<string | null | undefined>;
}

/** One call per animation frame (the global ones by default). */
export interface FrameScheduler {
  request(f: () => void): number;
  cancel(handle: number): void;
}

const RAF: FrameScheduler = {
  request: (f) => requestAnimationFrame(f),
  cancel: (h) => cancelAnimationFrame(h),
};

const isMacPlatform = () => typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

export class InputController {
  private readonly store = new DisposableStore();
  /** key codes sent down and not yet up (an up is sent only for these) */
  private readonly down = new Set<string>();
  private readonly clicks = new ClickCounter();
  /** an IME composition is in progress in the catcher (its text goes on compositionend) */
  private composing = false;
  private pendingMove: PointerEvent | null = null;
  private moveFrame = 0;

  constructor(
    private readonly target: InputTarget,
    private readonly host: InputHost,
    private readonly frames: FrameScheduler = RAF,
    private readonly mac: boolean = isMacPlatform(),
  ) {
    this.listen();
    this.store.defer(() => this.frames.cancel(this.moveFrame));
  }

  /** Removes every listener and drops a pending move. Idempotent. */
  dispose(): void {
    this.store.dispose();
  }

  private on<K extends keyof HTMLElementEventMap>(type: K, f: (e: HTMLElementEventMap[K]) => void, opts?: AddEventListenerOptions) {
    this.store.listen(this.target, type, f as (e: Event) => void, opts);
  }

  private listen() {
    const c = this.target;
    const h = this.host;
    this.on('pointerdown', (e) => {
      e.preventDefault();
      h.onPress();
      // A move still waiting for its animation frame happened before this press: send it first.
      this.flushMove();
      const p = h.pagePoint(e);
      if (!p) return;
      try {
        c.setPointerCapture(e.pointerId);
      } catch {
        /* not capturable: moves outside are lost */
      }
      const clicks = this.clicks.down(e.timeStamp, e.clientX, e.clientY, e.button);
      h.sendInput({ type: 'input_mouse', event: 'down', ...p, button: buttonName(e.button), clicks, modifiers: modifiers(e) });
    });
    this.on('pointerup', (e) => {
      const p = h.pagePoint(e);
      this.flushMove();
      if (!p) return;
      h.sendInput({ type: 'input_mouse', event: 'up', ...p, button: buttonName(e.button), clicks: this.clicks.current, modifiers: modifiers(e) });
    });
    this.on('pointermove', (e) => {
      // Latest-only: one move per animation frame.
      this.pendingMove = e;
      if (!this.moveFrame) this.moveFrame = this.frames.request(() => this.flushMove());
    });
    this.on(
      'wheel',
      (e) => {
        e.preventDefault();
        this.flushMove();
        const p = h.pagePoint(e);
        if (!p) return;
        const fit = h.fit();
        const pageH = fit ? fit.h / fit.scale : 800;
        h.sendInput({ type: 'input_mouse', event: 'wheel', ...p, modifiers: modifiers(e), deltaX: wheelPx(e.deltaX, e.deltaMode, pageH), deltaY: wheelPx(e.deltaY, e.deltaMode, pageH) });
      },
      { passive: false },
    );
    this.on('contextmenu', (e) => {
      e.preventDefault();
      const p = h.pagePoint(e);
      if (p) h.openMenu(e, p);
    });
    this.on('keydown', (e) => {
      if (e.isComposing || this.composing || e.keyCode === 229) return; // the IME owns it: the text comes on compositionend
      if (findChord(e, this.mac)) {
        e.preventDefault();
        h.openFind();
        return;
      }
      const zoom = zoomChord(e, this.mac, h.zoom());
      if (zoom !== null) {
        e.preventDefault();
        h.setZoom(zoom);
        return;
      }
      const chord = editChord(e, this.mac);
      if (chord) {
        e.preventDefault();
        if (chord === 'paste')
          void (h.readClipboard ?? readClipboard)().then((text) => {
            if (text) this.sendText(text);
          });
        else h.sendInput({ type: 'edit', op: chord });
        return;
      }
      const m = keyMessage('down', e);
      if (!m) return;
      e.preventDefault();
      this.down.add(e.code || e.key);
      h.sendInput(m);
    });
    this.on('keyup', (e) => {
      const k = e.code || e.key;
      if (!this.down.delete(k)) return; // never an up for a down the page did not get
      const m = keyMessage('up', e);
      if (m) h.sendInput(m);
    });
    // IME: the catcher holds the composition while it lasts (touching its value then would
    // cancel it); the committed text goes to the page once, as `input_text`.
    this.on('compositionstart', () => {
      this.composing = true;
    });
    this.on('compositionend', (e) => {
      this.composing = false;
      if (e.data) this.sendText(e.data);
      c.value = '';
    });
    this.on('input', (e) => {
      const ie = e as InputEvent;
      if (this.composing || ie.isComposing) return;
      // Text the browser typed without a key we forwarded (an IME commit without a
      // composition, a virtual keyboard, dictation) goes to the page as text. A composition's
      // own input events have other input types, so nothing is sent twice.
      if (ie.inputType === 'insertText' && ie.data) this.sendText(ie.data);
      c.value = '';
    });
    // The browser's own Edit menu (web mode) lands here as clipboard events on the catcher.
    this.on('paste', (e) => {
      e.preventDefault();
      const text = e.clipboardData?.getData('text/plain');
      if (text) this.sendText(text);
    });
    this.on('copy', (e) => {
      e.preventDefault();
      h.sendInput({ type: 'edit', op: 'copy' });
    });
    this.on('cut', (e) => {
      e.preventDefault();
      h.sendInput({ type: 'edit', op: 'cut' });
    });
    this.on('blur', () => {
      this.composing = false; // a composition ends with the focus (its compositionend may not come)
      // Keys held when focus leaves: release them in the page.
      for (const code of this.down) h.sendInput({ type: 'input_keyboard', event: 'up', key: code.startsWith('Key') ? code.slice(3).toLowerCase() : code, code, text: '', modifiers: 0 });
      this.down.clear();
    });
  }

  /** A paste (or committed IME text) as `input_text` pieces under the message cap, in order. */
  private sendText(text: string) {
    for (const t of textChunks(text)) this.host.sendInput({ type: 'input_text', text: t });
  }

  private flushMove() {
    this.frames.cancel(this.moveFrame);
    this.moveFrame = 0;
    const e = this.pendingMove;
    this.pendingMove = null;
    if (!e) return;
    const p = this.host.pagePoint(e);
    if (p) this.host.sendInput({ type: 'input_mouse', event: 'move', ...p, button: heldButton(e.buttons), modifiers: modifiers(e) });
  }
}
