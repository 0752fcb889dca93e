// The "⋯" button of a pane header: the header's buttons that the pane's width hid, as a menu.
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';

/** One hidden header button, as the menu offers it. */
interface Hidden {
  key: string;
  label: string;
  disabled: boolean;
  button: HTMLButtonElement;
}

/**
 * The header buttons (other than the "⋯" itself) that take no room now: the pane's container
 * queries hid them (`display: none`). Their label: `data-overflow-label`, else `aria-label`,
 * else `title`.
 */
export function hiddenButtons(header: Element): Hidden[] {
  const out: Hidden[] = [];
  header.querySelectorAll<HTMLButtonElement>('button:not(.pane-more)').forEach((b, i) => {
    if (b.getClientRects().length > 0) return;
    const label = b.dataset.overflowLabel ?? b.getAttribute('aria-label') ?? b.title;
    if (!label) return;
    out.push({ key: b.dataset.testid ?? `b${i}`, label, disabled: b.disabled, button: b });
  });
  return out;
}

/**
 * "⋯": shown by the stylesheet only while the pane is too narrow for every header button
 * (the same container queries hide those). A click lists the hidden ones, read from the
 * header when it opens; choosing one clicks that button, so every action keeps its one
 * implementation. The menu is rendered on `document.body`, not in the pane: a pane clips its
 * content and is the containing block of fixed descendants (container queries), so a menu
 * inside an 80 px pane would be cut. It stays inside the window; Escape or a click outside
 * closes it.
 */
export function OverflowMenu() {
  const btnRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const [items, setItems] = useState<Hidden[] | null>(null);
  const [pos, setPos] = useState({ x: 0, y: 0 });
  const close = () => setItems(null);

  useEffect(() => {
    if (!items) return;
    const down = (e: MouseEvent) => {
      const t = e.target as Node;
      if (!menuRef.current?.contains(t) && !btnRef.current?.contains(t)) close();
    };
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        close();
      }
    };
    window.addEventListener('mousedown', down, true);
    window.addEventListener('keydown', key, true);
    return () => {
      window.removeEventListener('mousedown', down, true);
      window.removeEventListener('keydown', key, true);
    };
  }, [items]);

  useLayoutEffect(() => {
    if (!items || !menuRef.current || !btnRef.current) return;
    const b = btnRef.current.getBoundingClientRect();
    const m = menuRef.current.getBoundingClientRect();
    setPos({
      x: Math.max(4, Math.min(b.right - m.width, innerWidth - m.width - 4)),
      y: Math.max(4, b.bottom + m.height + 4 > innerHeight ? b.top - m.height - 2 : b.bottom + 2),
    });
  }, [items]);

  return (
    <>
      <button
        ref={btnRef}
        className="pane-btn pane-more"
        data-testid="pane-more"
        title="More actions"
        aria-label="More actions"
        aria-haspopup="menu"
        aria-expanded={items !== null}
        onMouseDown={(e) => e.preventDefault() /* keep the pane's keyboard focus */}
        onClick={(e) => {
          e.stopPropagation();
          const header = btnRef.current?.closest('header');
          setItems((open) => (open || !header ? null : hiddenButtons(header)));
        }}
      >
        ⋯
      </button>
      {items &&
        createPortal(
          <div className="menu overflow-menu" role="menu" data-testid="pane-more-menu" ref={menuRef} style={{ left: pos.x, top: pos.y }}>
            {items.length === 0 && <div className="menu-note">Every action is in the header</div>}
            {items.map((it) => (
              <button
                key={it.key}
                role="menuitem"
                className="menu-item"
                data-testid={`more-${it.key}`}
                disabled={it.disabled}
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => {
                  close();
                  it.button.click();
                }}
              >
                {it.label}
              </button>
            ))}
          </div>,
          document.body,
        )}
    </>
  );
}
