import { describe, expect, it } from 'vitest';
import { findChord, findLabel } from './find';

const key = (k: Partial<{ key: string; code: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }>) => ({
  key: 'f',
  code: 'KeyF',
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  shiftKey: false,
  ...k,
});

describe('find in page', () => {
  it('opens on Ctrl+F (⌘F on a Mac), from the key or its code, and not with Shift, Alt or the other modifier', () => {
    expect(findChord(key({ ctrlKey: true }), false)).toBe(true);
    expect(findChord(key({ ctrlKey: true, key: 'а' }), false)).toBe(true); // a Cyrillic layout
    expect(findChord(key({ metaKey: true }), true)).toBe(true);
    expect(findChord(key({ ctrlKey: true, shiftKey: true }), false)).toBe(false);
    expect(findChord(key({ ctrlKey: true, altKey: true }), false)).toBe(false);
    expect(findChord(key({ metaKey: true }), false)).toBe(false);
    expect(findChord(key({ ctrlKey: true }), true)).toBe(false);
    expect(findChord(key({ ctrlKey: true, key: 'g', code: 'KeyG' }), false)).toBe(false);
  });

  it('says where the active match is, only for the text in the field', () => {
    expect(findLabel('a', { text: 'a', index: 2, count: 7, capped: false })).toBe('2 of 7');
    expect(findLabel('a', { text: 'a', index: 1, count: 1000, capped: true })).toBe('1 of 1000+');
    expect(findLabel('a', { text: 'a', index: 0, count: 0, capped: false })).toBe('No matches');
    expect(findLabel('ab', { text: 'a', index: 1, count: 3, capped: false })).toBe('');
    expect(findLabel('', null)).toBe('');
  });
});
