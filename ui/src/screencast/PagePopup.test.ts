import { describe, expect, it } from 'vitest';
import type { InputPopup, SelectPopup } from '../api/protocol';
import type { FitRect } from './input';
import { PagePopup } from './PagePopup';

const select: SelectPopup = { kind: 'select', x: 10, y: 20, width: 100, height: 30, options: [{ label: 'a', value: 'a', disabled: false }], selected: 0 };
const picker: InputPopup = { kind: 'input', x: 0, y: 0, width: 50, height: 20, input_type: 'date', value: '', min: '', max: '', step: '' };

function setup(fit?: FitRect) {
  const sent: object[] = [];
  const shown: unknown[] = [];
  let focused = 0;
  const popup = new PagePopup({
    sendInput: (m) => sent.push(m),
    show: (p) => shown.push(p),
    fit: () => fit,
    refocus: () => focused++,
  });
  return { popup, sent, shown, focused: () => focused };
}

describe('PagePopup', () => {
  it('shows a popup at its box mapped through the fit, or at its page box before a frame', () => {
    const a = setup({ x: 5, y: 0, w: 500, h: 400, scale: 0.5 });
    a.popup.opened(select);
    expect(a.shown).toEqual([{ ...select, box: { x: 10, y: 10, width: 50, height: 15 } }]);
    const b = setup();
    b.popup.opened(select);
    expect(b.shown).toEqual([{ ...select, box: { x: 10, y: 20, width: 100, height: 30 } }]);
  });

  it("a choice goes to the page only for the kind of popup open, then it closes and the page takes the keyboard", () => {
    const { popup, sent, shown, focused } = setup();
    popup.opened(select);
    popup.setValue('2026-01-01'); // not a picker: nothing sent
    expect(sent).toEqual([]);
    expect(shown.at(-1)).toBeNull();
    popup.opened(select);
    popup.choose(0);
    expect(sent).toEqual([{ type: 'popup_choice', index: 0 }]);
    popup.opened(picker);
    popup.setValue('2026-01-01');
    popup.choose(0); // nothing open any more
    expect(sent).toEqual([
      { type: 'popup_choice', index: 0 },
      { type: 'popup_value', value: '2026-01-01' },
    ]);
    expect(focused()).toBe(4);
  });

  it('a dismissal (null) sends nothing; losing focus closes without taking the keyboard, once', () => {
    const { popup, sent, shown, focused } = setup();
    popup.opened(select);
    popup.choose(null);
    expect(sent).toEqual([]);
    expect(focused()).toBe(1);
    popup.opened(picker);
    const before = shown.length;
    popup.dismiss();
    popup.dismiss();
    expect(shown.length).toBe(before + 1);
    expect(shown.at(-1)).toBeNull();
    expect(focused()).toBe(1);
  });
});
