import { describe, expect, it } from 'vitest';
import { parseCapabilities, popoutOffer, stubState } from './popout';

describe('parseCapabilities', () => {
  it('accepts the two documented shapes', () => {
    expect(parseCapabilities({ popout: { available: true, reason: null } })).toEqual({ available: true, reason: null });
    const no = { popout: { available: false, reason: 'No display: the sidecar runs without DISPLAY or WAYLAND_DISPLAY' } };
    expect(parseCapabilities(no)).toEqual(no.popout);
  });
  it.each([
    [null],
    [{}],
    [{ popout: null }],
    [{ popout: { available: 'yes', reason: null } }],
    [{ popout: { available: false, reason: null } }],
    [{ popout: { available: false, reason: '' } }],
    [{ popout: { available: true, reason: 'why' } }],
  ])('refuses %j', (v) => {
    expect(() => parseCapabilities(v)).toThrow(/capabilities/);
  });
});

describe('popoutOffer', () => {
  it('is available only when the sidecar says so, and says why not', () => {
    expect(popoutOffer({ available: true, reason: null })).toEqual({ available: true, reason: null });
    expect(popoutOffer({ available: false, reason: 'No display' })).toEqual({ available: false, reason: 'No display' });
    expect(popoutOffer({ error: 'sidecar unreachable' })).toEqual({ available: false, reason: "Couldn't ask the sidecar: sidecar unreachable" });
  });
});

describe('stubState', () => {
  const check = (poppedOut: boolean, popping: 'out' | 'in' | null, connected: boolean, want: ReturnType<typeof stubState>, launching = false) =>
    expect(stubState({ poppedOut, popping, connected, launching })).toBe(want);
  it('shows the screencast when not popped out and nothing is pending', () => check(false, null, true, null));
  it('offers nothing while the window opens', () => {
    check(false, 'out', true, 'opening');
    check(true, 'out', false, 'opening');
  });
  it('offers Pop back in once out', () => check(true, null, true, 'out'));
  it('says the window crashed when its Chromium is gone', () => check(true, null, false, 'crashed'));
  it('a window the user closed comes back through a launch: not a crash', () => check(true, null, false, 'returning', true));
  it('says it is returning during a pop-in', () => check(true, 'in', true, 'returning'));
  it('a disconnected browser in its pane is not a stub (the Relaunch panel shows)', () => check(false, null, false, null));
});
