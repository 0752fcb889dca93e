import { createRoot } from 'react-dom/client';
import '@xterm/xterm/css/xterm.css';
import './styles.css';
import { App } from './components/App';
import type { Scheme } from './terminal/theme';
import { WorkspaceStore } from './workspace/store';

const media = window.matchMedia('(prefers-color-scheme: dark)');
const scheme = (): Scheme => (media.matches ? 'dark' : 'light');

const store = new WorkspaceStore(scheme());
media.addEventListener('change', () => store.setScheme(scheme()));

// A small hook for end-to-end tests and debugging: read a pane's terminal text.
(window as unknown as { __porthole: unknown }).__porthole = {
  store,
  paneText: (paneId: string) => store.runtime(paneId)?.host.text() ?? null,
  paneSize: (paneId: string) => {
    const t = store.runtime(paneId)?.host.term;
    return t ? { cols: t.cols, rows: t.rows } : null;
  },
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
void store.init();
