// The page's open `<select>` list or picker input (protocol §8.4 `popup`), which the pane
// draws since a screencast shows no native popup: one at a time, until answered or
// dismissed. Owns which popup is open; answers go to the page as input messages.
import type { InputPopup, SelectPopup } from '../api/protocol';
import type { ScreencastState } from '../pane/types';
import { type FitRect, fromPage } from './input';

/** What the popup needs from the rest of the screencast. */
export interface PopupHost {
  /** an input message, in order behind the input already sent */
  sendInput(m: object): void;
  /** the popup to show (its box in pane body CSS px), or none */
  show(popup: ScreencastState['popup']): void;
  /** the current frame's fit, undefined before the first frame */
  fit(): FitRect | undefined;
  /** the page takes the keyboard back (after an answer given in the popup) */
  refocus(): void;
}

export class PagePopup {
  private open: SelectPopup | InputPopup | null = null;

  constructor(private readonly host: PopupHost) {}

  /** The page opened `p` (its box in page CSS px): shown over the frame where it is. */
  opened(p: SelectPopup | InputPopup): void {
    this.open = p;
    const fit = this.host.fit();
    const box = fit ? fromPage(fit, p) : { x: p.x, y: p.y, width: p.width, height: p.height };
    this.host.show({ ...p, box });
  }

  /** Picks option `index` of the `<select>` list shown, or dismisses it (null). */
  choose(index: number | null): void {
    if (index !== null && this.open?.kind === 'select') this.host.sendInput({ type: 'popup_choice', index });
    this.close();
    this.host.refocus();
  }

  /** Sets the picker input shown to `value` (as HTML spells its type's values), or dismisses it (null). */
  setValue(value: string | null): void {
    if (value !== null && this.open?.kind === 'input') this.host.sendInput({ type: 'popup_value', value });
    this.close();
    this.host.refocus();
  }

  /** Closes the popup shown without answering and without taking the keyboard (the pane lost focus). */
  dismiss(): void {
    if (this.open) this.close();
  }

  private close(): void {
    this.open = null;
    this.host.show(null);
  }
}
