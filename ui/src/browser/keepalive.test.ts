import { describe, expect, it } from 'vitest';
import { GRANT_IDLE_TTL_MS, GRANT_KEEPALIVE_MS, MIN_GRANT_KEEPALIVE_MS, grantKeepaliveMs } from './keepalive';

describe('grantKeepaliveMs', () => {
  const cases: Array<[string, number]> = [
    ['', GRANT_KEEPALIVE_MS],
    ['?grantKeepaliveMs=500', 500],
    ['?renderer=dom&grantKeepaliveMs=100', 100],
    ['?grantKeepaliveMs=99', GRANT_KEEPALIVE_MS],
    ['?grantKeepaliveMs=600000', GRANT_KEEPALIVE_MS],
    ['?grantKeepaliveMs=-5', GRANT_KEEPALIVE_MS],
    ['?grantKeepaliveMs=1e3', GRANT_KEEPALIVE_MS],
    ['?grantKeepaliveMs=', GRANT_KEEPALIVE_MS],
  ];
  for (const [search, want] of cases) it(JSON.stringify(search), () => expect(grantKeepaliveMs(search)).toBe(want));

  it('keeps a grant alive with room to spare: several keep-alives fit in one TTL', () => {
    expect(GRANT_IDLE_TTL_MS).toBe(300_000); // protocol §6.3, DESIGN §7
    expect(GRANT_KEEPALIVE_MS * 3).toBeLessThan(GRANT_IDLE_TTL_MS);
    expect(MIN_GRANT_KEEPALIVE_MS).toBeLessThan(GRANT_KEEPALIVE_MS);
  });
});
