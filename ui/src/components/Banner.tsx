// A banner over (or above) a browser pane's page: one compact line whatever the pane's width.
import { type ReactNode, useState } from 'react';

/**
 * One line: the text, cut with an ellipsis (the whole text is its tooltip, and a click on it
 * expands it in place), then the actions, which never shrink, so a dismiss button stays
 * inside the pane at its narrowest (80 px, the layout minimum).
 */
export function Banner({ testid, role, text, children }: { testid: string; role: 'status' | 'alert'; text: string; children?: ReactNode }) {
  const [open, setOpen] = useState(false);
  return (
    <div className={`browser-banner${open ? ' expanded' : ''}`} data-testid={testid} role={role}>
      <button
        type="button"
        className="browser-banner-text"
        data-testid={`${testid}-text`}
        title={text}
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
      >
        {text}
      </button>
      {children}
    </div>
  );
}
