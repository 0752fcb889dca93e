// What a screencast pane shows of an agent's actions (`ph browser`, protocol §8.4 `agent`):
// the verb in the header (kept `VERB_LINGER_MS` after the action ends, so a quick click is
// seen) and a fading mark over the canvas at each point or box acted on. Nothing is drawn
// into the page: the mark is an element over the canvas, placed through the frame's fit.
import type { AgentActivity } from '../api/protocol';
import { DisposableStore } from '../lifecycle/disposable';
import { MARK_MS, VERB_LINGER_MS, markFor, markKey } from './agent';
import type { FitRect } from './input';

export class AgentOverlay {
  private readonly store = new DisposableStore();
  /** clears the header's verb a moment after the action ended */
  private readonly verbTimer = this.store.timer();
  /** the last mark drawn (`markKey`): each is drawn once */
  private lastMark: string | null = null;

  constructor(
    /** the screencast host: marks are appended here; its data attributes tell tests what was drawn */
    private readonly host: HTMLElement,
    /** the current frame's fit (undefined before the first frame: no mark then) */
    private readonly fit: () => FitRect | undefined,
    /** the header's verb changed (null: none to show) */
    private readonly onVerb: (agent: { verb: string; acting: boolean } | null) => void,
  ) {}

  /** An agent acts (`acting`) or acted in this browser. */
  activity(a: AgentActivity): void {
    if (this.store.isDisposed) return;
    this.verbTimer.clear();
    this.onVerb({ verb: a.verb, acting: a.acting });
    this.host.dataset.agentVerb = a.verb;
    this.host.dataset.agentActing = String(a.acting);
    if (!a.acting)
      this.verbTimer.set(() => {
        this.onVerb(null);
        delete this.host.dataset.agentVerb;
        delete this.host.dataset.agentActing;
      }, VERB_LINGER_MS);
    const key = markKey(a);
    const fit = this.fit();
    if (!key || key === this.lastMark || !fit) return;
    const mark = markFor(fit, a);
    if (!mark) return;
    this.lastMark = key;
    const el = document.createElement('div');
    el.className = `agent-mark agent-mark-${mark.kind}`;
    el.setAttribute('data-testid', 'agent-mark');
    el.dataset.kind = mark.kind;
    el.dataset.verb = a.verb;
    el.style.left = `${mark.x}px`;
    el.style.top = `${mark.y}px`;
    el.style.width = `${mark.width}px`;
    el.style.height = `${mark.height}px`;
    el.style.animationDuration = `${MARK_MS}ms`;
    this.host.append(el);
    // For tests and debugging: how many marks were drawn, and the last one's box (host CSS px).
    this.host.dataset.agentMarks = String(Number(this.host.dataset.agentMarks ?? '0') + 1);
    this.host.dataset.agentMark = [mark.x, mark.y, mark.width, mark.height].map((n) => Math.round(n * 100) / 100).join(',');
    this.store.timeout(() => el.remove(), MARK_MS);
  }

  /** Cancels the verb's and the marks' timers. Idempotent. */
  dispose(): void {
    this.store.dispose();
  }
}
