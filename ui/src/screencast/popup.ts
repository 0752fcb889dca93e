// Keyboard movement in the pane's own `<select>` list (the page's native popup never shows
// in frames, so the pane draws it and must behave like it).

/**
 * The option index keyboard focus moves to from `from` by `key` in a list whose entries are
 * enabled or not: ArrowDown/ArrowUp step to the next/previous enabled option (staying put at
 * either end, as Chromium's list does), Home/End go to the first/last enabled one. Returns
 * `null` for any other key, or when no option is enabled. `from` may be -1 (nothing focused).
 */
export function moveInList(enabled: readonly boolean[], from: number, key: string): number | null {
  const first = enabled.indexOf(true);
  if (first < 0) return null;
  const last = enabled.lastIndexOf(true);
  switch (key) {
    case 'Home':
      return first;
    case 'End':
      return last;
    case 'ArrowDown':
      for (let i = from + 1; i < enabled.length; i++) if (enabled[i]) return i;
      return from < 0 ? first : from;
    case 'ArrowUp':
      for (let i = Math.min(from, enabled.length) - 1; i >= 0; i--) if (enabled[i]) return i;
      return from < 0 ? last : from;
    default:
      return null;
  }
}

/** The option that gets focus when the list opens: the selected one if enabled, else the first enabled. */
export function initialFocus(enabled: readonly boolean[], selected: number): number | null {
  if (selected >= 0 && enabled[selected]) return selected;
  const first = enabled.indexOf(true);
  return first < 0 ? null : first;
}
