import { useSyncExternalStore } from 'react';
import { problemText } from '../config/config';
import type { Settings } from '../config/Settings';

/**
 * Says why the config file is not applied (its file, line, column and the parser's message);
 * gone once the file parses again. The last good configuration stays in force meanwhile.
 */
export function ConfigBanner({ settings }: { settings: Settings }) {
  const view = useSyncExternalStore(settings.subscribe, settings.getSnapshot);
  const problem = view.snapshot?.error;
  if (!problem) return null;
  return (
    <div className="config-banner" role="alert" data-testid="config-banner">
      <strong>Config not applied</strong> (the last good one stays in force): <code>{problemText(problem)}</code>
    </div>
  );
}
