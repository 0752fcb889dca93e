import { describe, expect, it } from 'vitest';
import { appWindowRect, dialogInPane, popErrorText, popoutOffer, shouldRequestPop, statusClearsPopError, stubState } from './popout';

describe('popoutOffer', () => {
  it('is available only when the sidecar says so, and says why not', () => {
    expect(popoutOffer({ available: true, reason: null })).toEqual({ available: true, reason: null });
    expect(popoutOffer({ available: false, reason: 'No display' })).toEqual({ available: false, reason: 'No display' });
    expect(popoutOffer({ error: 'sidecar unreachable' })).toEqual({ available: false, reason: "Couldn't ask whether a window can open: sidecar unreachable" });
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

describe('shouldRequestPop', () => {
  it('does not ask to pop out a browser already out, nor anything while a pop is in flight', () => {
    expect(shouldRequestPop({ poppedOut: false, popping: null }, 'out')).toBe(true);
    expect(shouldRequestPop({ poppedOut: true, popping: null }, 'out')).toBe(false);
    expect(shouldRequestPop({ poppedOut: false, popping: 'out' }, 'out')).toBe(false);
    expect(shouldRequestPop({ poppedOut: true, popping: null }, 'in')).toBe(true);
    expect(shouldRequestPop({ poppedOut: true, popping: 'in' }, 'in')).toBe(false);
  });
});

describe('statusClearsPopError', () => {
  it('clears only once a window is up', () => {
    expect(statusClearsPopError({ connected: true, popped_out: true })).toBe(true);
    expect(statusClearsPopError({ connected: false, popped_out: true })).toBe(false);
    expect(statusClearsPopError({ connected: true, popped_out: false })).toBe(false);
    expect(statusClearsPopError({ connected: true })).toBe(false);
  });
});

describe('dialogInPane', () => {
  it('answers dialogs in the pane only while the browser is in it', () => {
    expect(dialogInPane({ poppedOut: false, popping: null })).toBe(true);
    expect(dialogInPane({ poppedOut: true, popping: null })).toBe(false);
    expect(dialogInPane({ poppedOut: false, popping: 'out' })).toBe(false);
    expect(dialogInPane({ poppedOut: true, popping: 'in' })).toBe(false);
  });
});

describe('popErrorText', () => {
  it('shows the sidecar\'s own sentence once, and prefixes anything else', () => {
    const own = "Couldn't open a window on display :99: Chromium could not connect to it";
    expect(popErrorText('out', own)).toBe(own);
    expect(popErrorText('out', 'the browser is being launched or closed')).toBe("Couldn't pop out: the browser is being launched or closed");
    expect(popErrorText('in', 'boom')).toBe("Couldn't pop back in: boom");
  });
});

describe('the app window for a pop-out to open beside', () => {
  it('is the window on the screen, rounded, or null when the platform does not say', () => {
    expect(appWindowRect({ screenX: 10.4, screenY: 20, outerWidth: 800, outerHeight: 600.6 })).toEqual({ x: 10, y: 20, width: 800, height: 601 });
    expect(appWindowRect({ screenX: -1600, screenY: 0, outerWidth: 800, outerHeight: 600 })).toEqual({ x: -1600, y: 0, width: 800, height: 600 });
    expect(appWindowRect({ screenX: 0, screenY: 0, outerWidth: 0, outerHeight: 0 })).toBeNull();
    expect(appWindowRect({ screenX: NaN, screenY: 0, outerWidth: 800, outerHeight: 600 })).toBeNull();
    expect(appWindowRect({ screenX: 0, screenY: 0, outerWidth: 1e6, outerHeight: 600 })).toBeNull();
  });
});
