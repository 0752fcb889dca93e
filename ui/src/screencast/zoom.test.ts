import { describe, expect, it } from 'vitest';
import { MAX_ZOOM, MIN_ZOOM } from '../api/protocol';
import { ZOOM_LEVELS, ZoomState, stepZoom, zoomChord, zoomLabel } from './zoom';

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

describe('ZoomState', () => {
  it('takes a factor at once when it was sent, not when the socket refused it', () => {
    const z = new ZoomState();
    expect(z.request(1.25, () => false)).toBe(false);
    expect(z.current).toBe(1);
    expect(z.request(1.25, () => true)).toBe(true);
    expect(z.current).toBe(1.25);
    expect(z.request(1.25, () => true)).toBe(false);
  });

  it('an echo of an earlier press is not the truth while a later one is on its way', () => {
    const z = new ZoomState();
    z.request(1.1, () => true);
    z.request(1.25, () => true);
    expect(z.reported(1.1)).toBe(false);
    expect(z.current).toBe(1.25);
    expect(z.reported(1.25)).toBe(true);
    // Nothing outstanding: the sidecar's word stands (another window zoomed it).
    expect(z.reported(2)).toBe(true);
    expect(z.current).toBe(2);
  });

  it('a new socket has nothing outstanding', () => {
    const z = new ZoomState();
    z.request(1.5, () => true);
    z.reconnected();
    expect(z.reported(0.5)).toBe(true);
    expect(z.current).toBe(0.5);
  });
});

describe('ZOOM_LEVELS', () => {
  it('span exactly the protocol zoom range, ascending', () => {
    expect(ZOOM_LEVELS[0]).toBe(MIN_ZOOM);
    expect(ZOOM_LEVELS[ZOOM_LEVELS.length - 1]).toBe(MAX_ZOOM);
    expect([...ZOOM_LEVELS].sort((a, b) => a - b)).toEqual([...ZOOM_LEVELS]);
  });
});
