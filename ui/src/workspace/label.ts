// What a pane's header and baseboard chip call it (DESIGN §13): a terminal shows the command
// running in it (from the shell integration, else the foreground program), else its title or
// shell; beside it, a short working directory.
import { displayUrl } from '../browser/url';
import type { PaneModel } from './model';

/** The pane's name in its header and baseboard chip. */
export function paneLabel(p: PaneModel): string {
  if (p.kind === 'browser') return p.title || (p.browser?.url ? displayUrl(p.browser.url) : '') || 'browser';
  return runningLabel(p) ?? (p.title || p.command || 'terminal');
}

/** What runs in terminal pane `p` now, if anything other than its shell: the command line, else the program's name. */
export function runningLabel(p: PaneModel): string | null {
  if (p.kind !== 'terminal' || p.status === 'exited') return null;
  const running = p.shell?.running;
  if (running) return running.command || p.foreground || 'running…';
  if (p.shell?.integration) return null;
  return p.foreground || null;
}

/** The last component of absolute path `cwd` ("/" for the root), for a header; null when unknown. */
export function shortCwd(cwd: string | null | undefined): string | null {
  if (!cwd) return null;
  const parts = cwd.split('/').filter(Boolean);
  return parts.length ? parts[parts.length - 1] : '/';
}
