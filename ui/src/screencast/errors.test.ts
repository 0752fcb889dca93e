import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { browserErrorText } from './errors';

describe('browserErrorText', () => {
  const blocked = new ApiError(403, 'blocked_address', '::ffff:169.254.169.254 is a link-local or cloud-metadata address');

  it('says a refused address is refused, with the sidecar message, on create and navigate', () => {
    for (const create of [true, false]) {
      const t = browserErrorText(blocked, create);
      expect(t).toBe('Porthole refuses this address: ::ffff:169.254.169.254 is a link-local or cloud-metadata address');
      expect(t).not.toContain('Chromium');
    }
  });

  it('keeps a Chromium start failure as one', () => {
    expect(browserErrorText(new ApiError(503, 'no_chromium', 'install chromium'), true)).toBe("Couldn't start Chromium for this page: install chromium");
    expect(browserErrorText(new ApiError(500, 'launch_failed', 'timed out'), true)).toBe("Couldn't start Chromium for this page: timed out");
    expect(browserErrorText(new Error('network down'), true)).toBe("Couldn't start Chromium for this page: Error: network down");
  });

  it("passes another call's error through", () => {
    expect(browserErrorText(new ApiError(502, 'cdp_failed', 'Page.navigate failed'), false)).toBe('Page.navigate failed');
  });
});
