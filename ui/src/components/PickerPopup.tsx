// The pane's own picker for a page's `<input type=date|time|datetime-local|month|week|color>`
// (the native one never shows in screencast frames and takes no clicks). Drawn under the
// element's box; a choice goes back through the store; Escape or a click elsewhere dismisses.
import { useEffect, useRef, useState } from 'react';
import type { InputPopup } from '../api/protocol';
import type { WorkspaceStore } from '../workspace/store';
import { type Day, formatDate, formatMonth, formatWeek, inRange, initialMonth, isoWeek, monthGrid, stepMonth } from '../screencast/picker';

type Box = { x: number; y: number; width: number; height: number };

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAYS = ['Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa', 'Su'];

function today(): Day {
  const t = new Date();
  return { year: t.getFullYear(), month: t.getMonth() + 1, day: t.getDate() };
}

/** A month of days; `pick` gets the clicked day; `selected` marks days as chosen. */
function Calendar({ value, min, max, selected, pick, weeks }: { value: string; min: string; max: string; selected: (d: Day) => boolean; pick: (d: Day) => void; weeks?: boolean }) {
  const [ym, setYm] = useState(() => initialMonth(value, today()));
  const grid = monthGrid(ym.year, ym.month);
  const minDay = min.slice(0, 10);
  const maxDay = max.slice(0, 10);
  return (
    <div className="picker-calendar">
      <div className="picker-head">
        <button className="pane-btn" data-testid="picker-prev" aria-label="Previous month" onClick={() => setYm(stepMonth(ym, -1))}>
          ‹
        </button>
        <span data-testid="picker-title">
          {MONTHS[ym.month - 1]} {ym.year}
        </span>
        <button className="pane-btn" data-testid="picker-next" aria-label="Next month" onClick={() => setYm(stepMonth(ym, 1))}>
          ›
        </button>
      </div>
      <div className={`picker-grid${weeks ? ' weeks' : ''}`} role="grid">
        {weeks && <span className="picker-dow">Wk</span>}
        {WEEKDAYS.map((d) => (
          <span key={d} className="picker-dow">
            {d}
          </span>
        ))}
        {grid.map((d, i) => {
          const iso = formatDate(d);
          return (
            <span key={iso} style={{ display: 'contents' }}>
              {weeks && i % 7 === 0 && <span className="picker-week">{isoWeek(d).week}</span>}
              <button
                className={`picker-day${d.inMonth ? '' : ' outside'}${selected(d) ? ' selected' : ''}`}
                data-testid="picker-day"
                data-date={iso}
                aria-selected={selected(d)}
                disabled={!inRange(iso, minDay, maxDay)}
                onClick={() => pick(d)}
              >
                {d.day}
              </button>
            </span>
          );
        })}
      </div>
    </div>
  );
}

/** The picker body for one input type; `done` answers with a value in HTML's spelling. */
function PickerBody({ p, done }: { p: InputPopup; done: (v: string) => void }) {
  const [date, setDate] = useState(p.value.slice(0, 10));
  const [time, setTime] = useState(p.input_type === 'time' ? p.value : p.value.slice(11));
  const [color, setColor] = useState(p.value || '#000000');
  const [year, setYear] = useState(() => initialMonth(p.value, today()).year);
  const ok = (v: string) => (
    <button className="panel-btn primary" data-testid="picker-ok" onClick={() => done(v)}>
      OK
    </button>
  );
  switch (p.input_type) {
    case 'date':
      return (
        <>
          <Calendar value={p.value} min={p.min} max={p.max} selected={(d) => formatDate(d) === p.value} pick={(d) => done(formatDate(d))} />
          <div className="picker-actions">
            <button className="panel-btn" data-testid="picker-clear" onClick={() => done('')}>
              Clear
            </button>
            <button className="panel-btn" data-testid="picker-today" onClick={() => done(formatDate(today()))}>
              Today
            </button>
          </div>
        </>
      );
    case 'week': {
      const cur = p.value;
      return (
        <Calendar
          weeks
          value={p.value}
          min=""
          max=""
          selected={(d) => {
            const w = isoWeek(d);
            return formatWeek(w.year, w.week) === cur;
          }}
          pick={(d) => {
            const w = isoWeek(d);
            done(formatWeek(w.year, w.week));
          }}
        />
      );
    }
    case 'month':
      return (
        <div className="picker-calendar">
          <div className="picker-head">
            <button className="pane-btn" data-testid="picker-prev" aria-label="Previous year" onClick={() => setYear(year - 1)}>
              ‹
            </button>
            <span data-testid="picker-title">{year}</span>
            <button className="pane-btn" data-testid="picker-next" aria-label="Next year" onClick={() => setYear(year + 1)}>
              ›
            </button>
          </div>
          <div className="picker-months">
            {MONTHS.map((m, i) => {
              const v = formatMonth(year, i + 1);
              return (
                <button key={m} className={`picker-day${v === p.value ? ' selected' : ''}`} data-testid="picker-month" data-month={v} disabled={!inRange(v, p.min, p.max)} onClick={() => done(v)}>
                  {m}
                </button>
              );
            })}
          </div>
        </div>
      );
    case 'datetime-local':
      return (
        <>
          <Calendar value={p.value} min={p.min} max={p.max} selected={(d) => formatDate(d) === date} pick={(d) => setDate(formatDate(d))} />
          <div className="picker-actions">
            <input type="time" data-testid="picker-time" aria-label="time" value={time} onChange={(e) => setTime(e.target.value)} onKeyDown={(e) => e.stopPropagation()} />
            {ok(date && time ? `${date}T${time}` : '')}
          </div>
        </>
      );
    case 'time':
      return (
        <div className="picker-actions">
          <input type="time" data-testid="picker-time" aria-label="time" step={p.step || undefined} min={p.min || undefined} max={p.max || undefined} value={time} onChange={(e) => setTime(e.target.value)} onKeyDown={(e) => e.stopPropagation()} autoFocus />
          {ok(time)}
        </div>
      );
    case 'color':
      return (
        <div className="picker-actions">
          <input type="color" data-testid="picker-color" aria-label="colour" value={color} onChange={(e) => setColor(e.target.value)} />
          <input
            data-testid="picker-hex"
            aria-label="hex colour"
            size={8}
            value={color}
            onChange={(e) => setColor(e.target.value.toLowerCase())}
            onKeyDown={(e) => {
              e.stopPropagation();
              if (e.key === 'Enter' && /^#[0-9a-f]{6}$/.test(color)) done(color);
            }}
          />
          {/^#[0-9a-f]{6}$/.test(color) ? ok(color) : <span className="browser-url-error">#rrggbb</span>}
        </div>
      );
  }
}

/** The picker popup of screencast pane `paneId` at the element's box (pane body CSS px). */
export function PickerPopupOverlay({ store, paneId, popup }: { store: WorkspaceStore; paneId: string; popup: InputPopup & { box: Box } }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const down = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) store.browser.setPopupValue(paneId, null);
    };
    const key = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      store.browser.setPopupValue(paneId, null);
    };
    window.addEventListener('mousedown', down, true);
    window.addEventListener('keydown', key, true);
    return () => {
      window.removeEventListener('mousedown', down, true);
      window.removeEventListener('keydown', key, true);
    };
  }, [popup, store, paneId]);
  return (
    <div
      className="menu picker-popup"
      role="dialog"
      aria-label={`Choose a ${popup.input_type}`}
      data-testid="picker-popup"
      data-type={popup.input_type}
      ref={ref}
      style={{ left: popup.box.x, top: popup.box.y + popup.box.height }}
      onMouseDown={(e) => e.stopPropagation()}
    >
      <PickerBody key={`${popup.input_type}:${popup.value}:${popup.x},${popup.y}`} p={popup} done={(v) => store.browser.setPopupValue(paneId, v)} />
    </div>
  );
}
