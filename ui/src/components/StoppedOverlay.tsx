import { type ReactNode, useEffect, useRef } from 'react';
import type { Liveness } from '../api/liveness';

const TEXT: Record<Exclude<Liveness, 'up'>, { title: string; body: ReactNode }> = {
  stopped: {
    title: 'Porthole has stopped',
    body: (
      <>
        This page can no longer reach it, so the terminals and browsers here are out of reach too. Start Porthole
        again (for example <code>cargo xtask run --web</code>) and open the address it prints.
      </>
    ),
  },
  'signed-out': {
    title: 'Porthole was restarted',
    body: 'This page still carries the sign-in of the Porthole that stopped. Open the address the new one printed: it signs this browser in.',
  },
};

/**
 * Covers the wall while Porthole doesn't answer: one state for the whole app instead of
 * each pane offering its own way out. It takes the keyboard, so keys can't reach panes
 * that can't deliver them. It goes away by itself if Porthole answers again.
 */
export function StoppedOverlay({ liveness }: { liveness: Exclude<Liveness, 'up'> }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), [liveness]);
  const t = TEXT[liveness];
  return (
    <div className="stopped-overlay" data-testid="stopped-overlay" data-liveness={liveness}>
      <div className="stopped-card" role="alertdialog" aria-modal="true" aria-labelledby="stopped-title" tabIndex={-1} ref={ref}>
        <h2 id="stopped-title">{t.title}</h2>
        <p>{t.body}</p>
        {liveness === 'stopped' && (
          <p className="stopped-note">Still checking: if it answers again, this page picks up where it was.</p>
        )}
      </div>
    </div>
  );
}
