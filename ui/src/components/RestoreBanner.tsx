import { useSyncExternalStore } from 'react';
import { currentProblem, problemText, reportProblem, subscribeProblem } from '../workspace/restore';

/**
 * Says that the saved session could not be restored (its file was corrupt or unreadable),
 * naming the file it was moved to; the wall started fresh. Dismissed with its button.
 */
export function RestoreBanner() {
  const problem = useSyncExternalStore(subscribeProblem, currentProblem);
  if (!problem) return null;
  return (
    <div className="config-banner restore-banner" role="alert" data-testid="restore-banner">
      <strong>Session not restored.</strong> <code>{problemText(problem)}</code>{' '}
      <button type="button" data-testid="restore-banner-dismiss" onClick={() => reportProblem(null)}>
        Dismiss
      </button>
    </div>
  );
}
