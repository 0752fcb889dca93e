import { createRoot } from 'react-dom/client';
import '@xterm/xterm/css/xterm.css';
import './styles.css';
import { App } from './components/App';
import { api } from './api/client';
import { Settings } from './config/Settings';
import type { Scheme } from './terminal/theme';
import { WorkspaceStore } from './workspace/store';

const media = window.matchMedia('(prefers-color-scheme: dark)');
const scheme = (): Scheme => (media.matches ? 'dark' : 'light');

const settings = new Settings(scheme());
media.addEventListener('change', () => settings.setSystemScheme(scheme()));
const store = new WorkspaceStore(settings);

// A small hook for end-to-end tests and debugging: read a pane's terminal text.
(window as unknown as { __porthole: unknown }).__porthole = {
  store,
  paneText: (paneId: string) => store.runtime(paneId)?.host.text() ?? null,
  paneSize: (paneId: string) => {
    const t = store.runtime(paneId)?.host.term;
    return t ? { cols: t.cols, rows: t.rows } : null;
  },
  /** the font size xterm.js renders the pane's terminal with, in CSS pixels */
  paneFontSize: (paneId: string) => store.runtime(paneId)?.host.term.options.fontSize ?? null,
  renderer: (paneId: string) => store.runtime(paneId)?.host.renderer ?? null,
  /** the text of the top line of the pane's viewport (prompt navigation tests) */
  paneTopLine: (paneId: string) => {
    const t = store.runtime(paneId)?.host.term;
    if (!t) return null;
    const b = t.buffer.active;
    return b.getLine(b.viewportY)?.translateToString(true) ?? null;
  },
};

createRoot(document.getElementById('root')!).render(<App store={store} />);
// The configuration before the first terminal opens (the UI channel brings each change later).
void api
  .config()
  .then((c) => settings.apply(c))
  .catch(() => {})
  .finally(() => void store.init());
