import { describe, expect, it } from 'vitest';
import { acceptFilters, formatBytes } from './native';

describe('native helpers', () => {
  it('turns an accept list of extensions into one dialog filter, anything else into none', () => {
    expect(acceptFilters('.png, .jpg')).toEqual([{ name: '.png, .jpg', extensions: ['png', 'jpg'] }]);
    expect(acceptFilters('image/*')).toEqual([]);
    expect(acceptFilters('.png,image/*')).toEqual([]);
    expect(acceptFilters('')).toEqual([]);
  });
  it('formats sizes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(12 * 1024 * 1024)).toBe('12 MB');
  });
});
