// The trust prompt for a project file (DESIGN §14): the file, and every command its layouts
// would run, before anything runs. Only the human answers it (an agent cannot trust a file).
import { useEffect, useSyncExternalStore } from 'react';
import { commandText, type ProjectPrompts } from './project';

/** How long "Layout dev: 1 started, 2 reused" stays, in milliseconds. */
const DONE_NOTICE_MS = 6000;

/**
 * "Trust this project file?" with the file's path and, per layout, the commands (with their
 * directories) and the browsers it would open. Cancel has the keyboard; "Trust" (or "Trust
 * and start NAME" when the human asked for a layout here) records the trust. When no question
 * is open, a failed start shows as a notice instead.
 */
export function TrustPrompt({ prompts }: { prompts: ProjectPrompts }) {
  const st = useSyncExternalStore(prompts.subscribe, prompts.state);
  const q = st.question;
  const notice = q ? null : (st.error ?? st.done);
  useEffect(() => {
    // What a start did is news for a moment; an error stays until dismissed.
    if (!notice || st.error) return;
    const t = setTimeout(() => prompts.clearNotice(), DONE_NOTICE_MS);
    return () => clearTimeout(t);
  }, [notice, st.error, prompts]);
  if (!q) {
    if (!notice) return null;
    return (
      <div className={`project-notice${st.error ? ' failed' : ''}`} data-testid="project-notice" role={st.error ? 'alert' : 'status'}>
        <span>{notice}</span>
        <button className="pane-btn" aria-label="Dismiss" onClick={() => prompts.clearNotice()}>
          ×
        </button>
      </div>
    );
  }
  const first = q.layouts.filter((l) => l.layout === q.layout);
  const layouts = [...first, ...q.layouts.filter((l) => l.layout !== q.layout)];
  return (
    <div className="browser-prompt-backdrop close-confirm-backdrop" onMouseDown={(e) => e.target === e.currentTarget && prompts.dismiss()}>
      <div
        className="browser-prompt trust-prompt"
        data-testid="trust-prompt"
        role="alertdialog"
        aria-label="Trust this project file?"
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') prompts.dismiss();
        }}
      >
        <p>
          <strong>Trust this project file?</strong>
        </p>
        <p className="trust-file" data-testid="trust-file">
          {q.file}
        </p>
        <p>It can run these commands. Nothing runs until you trust it; if the file changes, Porthole asks again.</p>
        <div className="trust-layouts">
          {layouts.map((l) => (
            <div key={l.layout} className="trust-layout" data-testid="trust-layout" data-layout={l.layout}>
              <div className="menu-heading">{l.layout}</div>
              <ul>
                {l.panes.map((p, i) => (
                  <li key={`p${i}`} data-testid="trust-command">
                    <code>{commandText(p.command)}</code> <span className="trust-cwd">in {p.cwd}</span>
                  </li>
                ))}
                {l.browsers.map((b, i) => (
                  <li key={`b${i}`} data-testid="trust-browser">
                    opens <code>{b.url}</code>
                    {b.mode ? ` (${b.mode})` : ''}
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </div>
        {st.error && (
          <p className="menu-error" role="alert" data-testid="trust-error">
            {st.error}
          </p>
        )}
        <div className="browser-panel-actions">
          <button className="panel-btn" data-testid="trust-cancel" autoFocus onClick={() => prompts.dismiss()}>
            Cancel
          </button>
          <button className="panel-btn primary" data-testid="trust-ok" disabled={st.busy} onClick={() => void prompts.trust()}>
            {q.start ? `Trust and start ${q.start.layout}` : 'Trust'}
          </button>
        </div>
      </div>
    </div>
  );
}
