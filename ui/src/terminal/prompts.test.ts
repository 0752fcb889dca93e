import { describe, expect, it } from 'vitest';
import { jumpTarget, parseMark } from './prompts';

describe('prompt marks', () => {
  it('parses OSC 133 payloads', () => {
    expect(parseMark('A')).toEqual({ kind: 'A', exit: null });
    expect(parseMark('C;cmdline_url=ls')).toEqual({ kind: 'C', exit: null });
    expect(parseMark('D;1')).toEqual({ kind: 'D', exit: 1 });
    expect(parseMark('D')).toEqual({ kind: 'D', exit: null });
    expect(parseMark('D;x')).toEqual({ kind: 'D', exit: null });
    expect(parseMark('P;k=i')).toBe(null);
  });

  it('jumps to the prompt before or after the viewport top', () => {
    const lines = [0, 10, 40, 90];
    expect(jumpTarget(lines, 40, -1)).toBe(10);
    expect(jumpTarget(lines, 41, -1)).toBe(40);
    expect(jumpTarget(lines, 0, -1)).toBe(null);
    expect(jumpTarget(lines, 40, 1)).toBe(90);
    expect(jumpTarget(lines, 90, 1)).toBe(null);
  });
});
