import { describe, expect, it } from 'vitest';
import { sshParam } from './launch';

describe('sshParam', () => {
  it('reads ?ssh=HOST, decoded and trimmed', () => {
    expect(sshParam('?ssh=porthole-test')).toBe('porthole-test');
    expect(sshParam('?a=1&ssh=me%40box%3A2222')).toBe('me@box:2222');
    expect(sshParam('?ssh=%20box%20')).toBe('box');
  });
  it('is null when absent or empty; a bad host is passed on for the dialog to refuse', () => {
    expect(sshParam('')).toBeNull();
    expect(sshParam('?ssh=')).toBeNull();
    expect(sshParam('?x=porthole-test')).toBeNull();
    expect(sshParam('?ssh=a%20b')).toBe('a b');
  });
});
