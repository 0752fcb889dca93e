// Terminal colour themes matching the chrome (see styles.css).
import type { ITheme } from '@xterm/xterm';

export const DARK: ITheme = {
  background: '#15171c',
  foreground: '#d5d9e0',
  cursor: '#e8c46a',
  cursorAccent: '#15171c',
  selectionBackground: '#3b4a66',
  black: '#1d2027',
  red: '#ef6b73',
  green: '#8fcf7a',
  yellow: '#e8c46a',
  blue: '#6cb0f2',
  magenta: '#c99af0',
  cyan: '#5ccfc7',
  white: '#c7ccd4',
  brightBlack: '#5c6370',
  brightRed: '#ff8a91',
  brightGreen: '#a8e494',
  brightYellow: '#f5d88c',
  brightBlue: '#8cc4ff',
  brightMagenta: '#dcb6ff',
  brightCyan: '#7fe3dc',
  brightWhite: '#f2f4f7',
};

export const LIGHT: ITheme = {
  background: '#fbfbfc',
  foreground: '#24292f',
  cursor: '#2d6cdf',
  cursorAccent: '#fbfbfc',
  selectionBackground: '#c6dafc',
  black: '#24292f',
  red: '#cf222e',
  green: '#1a7f37',
  yellow: '#9a6700',
  blue: '#0969da',
  magenta: '#8250df',
  cyan: '#1b7c83',
  white: '#6e7781',
  brightBlack: '#57606a',
  brightRed: '#a40e26',
  brightGreen: '#2da44e',
  brightYellow: '#bf8700',
  brightBlue: '#218bff',
  brightMagenta: '#a475f9',
  brightCyan: '#3192aa',
  brightWhite: '#8c959f',
};

export type Scheme = 'light' | 'dark';

export function themeFor(scheme: Scheme): ITheme {
  return scheme === 'dark' ? DARK : LIGHT;
}
