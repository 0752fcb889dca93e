import { describe, expect, it } from 'vitest';
import { stepZoom, zoomChord, zoomLabel } from './zoom';

const k = (key: string, code: string, ctrl = true) => ({ key, code, ctrlKey: ctrl, metaKey: false, altKey: false });

describe('page zoom', () => {
  it('steps through the levels and stops at the ends', () => {
    expect(stepZoom(1, 1)).toBe(1.1);
    expect(stepZoom(1, -1)).toBe(0.9);
    expect(stepZoom(5, 1)).toBe(5);
    expect(stepZoom(0.25, -1)).toBe(0.25);
    expect(stepZoom(1.2, 1)).toBe(1.25);
  });
  it('reads Ctrl+= / Ctrl++ / Ctrl+- / Ctrl+0, nothing else', () => {
    expect(zoomChord(k('=', 'Equal'), false, 1)).toBe(1.1);
    expect(zoomChord(k('+', 'Equal'), false, 1)).toBe(1.1);
    expect(zoomChord(k('-', 'Minus'), false, 1.1)).toBe(1);
    expect(zoomChord(k('0', 'Digit0'), false, 2)).toBe(1);
    expect(zoomChord(k('=', 'Equal', false), false, 1)).toBeNull();
    expect(zoomChord(k('a', 'KeyA'), false, 1)).toBeNull();
    expect(zoomChord({ ...k('=', 'Equal', false), metaKey: true }, true, 1)).toBe(1.1);
  });
  it('labels', () => {
    expect(zoomLabel(1.25)).toBe('125%');
    expect(zoomLabel(0.33)).toBe('33%');
  });
});
