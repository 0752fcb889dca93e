// "Start layout ▸ NAME" in a terminal pane's context menu: one item per layout of the project
// file nearest the pane's cwd, shown only when there is one (asked when the menu opens).
import { useEffect, useState } from 'react';
import { ApiError, api } from '../api/client';
import { parseProjectInfo, type ProjectInfo } from './project';
import { projectPrompts } from './prompts';

/**
 * The menu group for pane `handle` running terminal `terminal`; nothing while asking, when
 * no project file is found, or when the question fails (a broken file says so in one line).
 * Picking an item closes the menu (`onPicked`) and starts the layout, asking for trust first
 * when the file is not trusted.
 */
export function LayoutItems({
  terminal,
  handle,
  onPicked,
  onShown,
}: {
  terminal: string | null;
  handle: string | null;
  onPicked: () => void;
  /** called once the group has something to show (the menu re-fits itself in the window) */
  onShown: () => void;
}) {
  const [info, setInfo] = useState<ProjectInfo | null>(null);
  const [broken, setBroken] = useState<string | null>(null);
  const shown = broken !== null || (info !== null && info.layouts.length > 0);
  useEffect(() => {
    if (shown) onShown();
  }, [shown, onShown]);
  useEffect(() => {
    if (!terminal) return;
    let live = true;
    api.project(terminal).then(
      (v) => live && setInfo(parseProjectInfo(v)),
      // A file that does not parse says so (file, line, column); other failures hide the group.
      (e: unknown) => live && e instanceof ApiError && e.code === 'bad_project' && setBroken(e.message),
    );
    return () => {
      live = false;
    };
  }, [terminal]);
  if (broken) {
    return (
      <div className="menu-group" data-testid="project-section">
        <div className="menu-note menu-error" data-testid="project-broken" role="alert">
          {broken}
        </div>
      </div>
    );
  }
  if (!info || !handle || info.layouts.length === 0) return null;
  return (
    <div className="menu-group" data-testid="project-section" data-file={info.file}>
      {info.layouts.map((l) => (
        <button
          key={l.layout}
          role="menuitem"
          className="menu-item"
          data-testid="menu-start-layout"
          data-layout={l.layout}
          title={`${info.file}${info.trusted ? '' : ' (not trusted yet: Porthole asks first)'}`}
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => {
            onPicked();
            void projectPrompts.start(handle, terminal!, l.layout);
          }}
        >
          <span>Start layout ▸ {l.layout}</span>
        </button>
      ))}
    </div>
  );
}
