import { describe, expect, it } from 'vitest';
import { sanitizePaste } from './paste';

describe('sanitizePaste', () => {
  const cases: Array<[string, string, string]> = [
    ['plain text is untouched', 'echo hi\nls -l', 'echo hi\nls -l'],
    ['end marker is removed', 'a\x1b[201~rm -rf ~\n', 'arm -rf ~\n'],
    ['start marker is removed', '\x1b[200~x', 'x'],
    ['8-bit CSI markers are removed', 'a\u009b201~b', 'ab'],
    ['nested markers cannot reassemble', 'a\x1b[20\x1b[201~1~b', 'ab'],
    ['other escapes are kept', '\x1b[31mred\x1b[0m', '\x1b[31mred\x1b[0m'],
    ['empty stays empty', '', ''],
    ['unicode is kept', 'héllo ✓ 🚀', 'héllo ✓ 🚀'],
  ];
  for (const [name, input, expected] of cases) it(name, () => expect(sanitizePaste(input)).toBe(expected));
});
