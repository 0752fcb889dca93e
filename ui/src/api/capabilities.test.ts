import { describe, expect, it } from 'vitest';
import { parseCapabilities } from './capabilities';

describe('parseCapabilities', () => {
  it('accepts the two documented shapes', () => {
    expect(parseCapabilities({ popout: { available: true, reason: null } })).toEqual({ available: true, reason: null });
    const no = { popout: { available: false, reason: 'No display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)' } };
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
