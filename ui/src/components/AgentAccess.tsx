// The "Agent access" settings panel (issue 24): what an agent may do with sealed content
// (closed shadow roots). It shows `[agent.sealed]` as the sidecar sends it and writes each
// change through `PATCH /api/config/agent-sealed`; the file stays the one source of truth
// (the answer, and the UI channel's `config`, bring the new snapshot back). It also holds
// `[agent] show_secrets` (issue 25), written through `PATCH /api/config/agent`.
import { useState, useSyncExternalStore } from 'react';
import { api, ApiError } from '../api/client';
import type { Settings } from '../config/Settings';
import { LEVERS, LIMITS, type LimitKey, type SealedPolicy, type SwitchKey, checkLimit } from '../config/sealed';
import type { Snapshot } from '../workspace/model';

/** A screencast pane the detectability check can run in. */
interface Target {
  paneId: string;
  browserId: string;
  label: string;
}

/** The screencast panes with a browser, the focused one first. */
function screencastTargets(snap: Snapshot): Target[] {
  const out: Target[] = [];
  for (const p of Object.values(snap.panes)) {
    const b = p.kind === 'browser' ? p.browser : undefined;
    if (!b || b.mode !== 'screencast' || !b.browserId) continue;
    out.push({ paneId: p.id, browserId: b.browserId, label: `${p.handle ?? p.id} · ${b.title || b.url}` });
  }
  const f = snap.layout.focused;
  return out.sort((a, b) => Number(b.paneId === f) - Number(a.paneId === f));
}

/** The probe's answer as the panel shows it, or null when it is not the expected shape. */
function probeLines(v: unknown): string[] | null {
  const o = v as Record<string, unknown> | null;
  if (!o || typeof o.verdict !== 'string' || typeof o.shadow_root_null !== 'boolean' || typeof o.native_source !== 'boolean') return null;
  return [
    o.verdict,
    `host.shadowRoot after attachShadow({mode:'closed'}): ${o.shadow_root_null ? 'null (sealed)' : 'the root (opened)'}`,
    `attachShadow's source: ${o.native_source ? 'native' : `not native — ${String(o.source ?? '').slice(0, 80)}…`}`,
    `force-open ${o.armed ? 'armed: the next document of this pane is patched' : 'not armed'}`,
  ];
}

function Badge({ tier }: { tier: string }) {
  return (
    <span className={`tier-badge tier-${tier.toLowerCase()}`} data-testid="tier-badge" data-tier={tier}>
      {tier}
    </span>
  );
}

/**
 * The panel, over the whole app. `settings` holds the snapshot in force; `wall` the panes (for
 * the detectability check). Escape or "Close" closes it.
 */
export function AgentAccess({ settings, wall, onClose }: { settings: Settings; wall: Snapshot; onClose: () => void }) {
  const view = useSyncExternalStore(settings.subscribe, settings.getSnapshot);
  const policy: SealedPolicy | null = view.config.sealed;
  const locked = view.snapshot?.envLocks.includes('agent.sealed') ?? false;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [drafts, setDrafts] = useState<Partial<Record<LimitKey, string>>>({});
  const targets = screencastTargets(wall);
  const [target, setTarget] = useState<string>('');
  const [probe, setProbe] = useState<string[] | null>(null);
  const chosen = targets.find((t) => t.browserId === target) ?? targets[0];

  const write = async (patch: Record<string, boolean | number>) => {
    setBusy(true);
    setError(null);
    try {
      settings.apply(await api.patchAgentSealed(patch));
    } catch (e) {
      setError(e instanceof ApiError ? `${e.message} (${e.code})` : String(e));
    } finally {
      setBusy(false);
    }
  };
  const toggle = (key: SwitchKey, on: boolean) => {
    if (key === 'force_open' && on) setConfirming(true);
    else void write({ [key]: on });
  };
  const commitLimit = (key: LimitKey) => {
    const text = drafts[key];
    if (text === undefined) return;
    const c = checkLimit(key, text);
    if (!c.ok) return setError(c.reason);
    setDrafts((d) => ({ ...d, [key]: undefined }));
    if (policy && policy[key] !== c.value) void write({ [key]: c.value });
  };
  const runProbe = async () => {
    if (!chosen) return;
    setProbe(null);
    setError(null);
    try {
      setProbe(probeLines(await api.sealedProbe(chosen.browserId)) ?? ['The check gave an answer this panel does not understand.']);
    } catch (e) {
      setError(e instanceof ApiError ? `Detectability check: ${e.message} (${e.code})` : String(e));
    }
  };
  const off = !policy || locked || busy;
  const showSecrets = view.config.showSecrets;
  const writeShowSecrets = async (on: boolean) => {
    setBusy(true);
    setError(null);
    try {
      settings.apply(await api.patchAgent({ show_secrets: on }));
    } catch (e) {
      setError(e instanceof ApiError ? `${e.message} (${e.code})` : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="browser-prompt-backdrop agent-access-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        className="browser-prompt agent-access"
        data-testid="agent-access"
        role="dialog"
        aria-label="Agent access"
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') (confirming ? setConfirming(false) : onClose());
        }}
      >
        <h2 className="agent-access-title">Agent access</h2>
        <p className="agent-access-intro">
          What an agent driving a browser pane (<code>ph browser</code>) may do with sealed content: controls inside closed shadow roots. Saved in{' '}
          <code>[agent.sealed]</code> of <code>{view.snapshot?.file ?? 'config.toml'}</code>.
        </p>
        {locked && (
          <p className="agent-access-locked" data-testid="agent-access-locked" role="status">
            Locked by the environment: <code>PORTHOLE_AGENT_SEALED=off</code> is set, so sealed content is off whatever the file says.
          </p>
        )}
        {!policy && <p data-testid="agent-access-unavailable">This Porthole does not offer sealed-content settings.</p>}
        {policy && (
          <>
            <label className="agent-row agent-master">
              <input type="checkbox" data-testid="sealed-enabled" checked={policy.enabled && !locked} disabled={off} onChange={(e) => void write({ enabled: e.currentTarget.checked })} />
              <span className="agent-row-text">
                <strong>Sealed content</strong>
                <span className="agent-row-line">The master switch: off refuses every lever below.</span>
              </span>
            </label>
            {LEVERS.map((l) => (
              <label key={l.key} className={`agent-row${l.tier ? '' : ' agent-sub'}`} data-testid={`lever-${l.key}`}>
                <input
                  type="checkbox"
                  data-testid={`sealed-${l.key}`}
                  checked={policy[l.key]}
                  disabled={off || !policy.enabled}
                  onChange={(e) => toggle(l.key, e.currentTarget.checked)}
                />
                <span className="agent-row-text">
                  <span>
                    {l.label} {l.tier && <Badge tier={l.tier} />}
                  </span>
                  <span className="agent-row-line">{l.line}</span>
                </span>
              </label>
            ))}
            <div className="agent-limits">
              {LIMITS.map((l) => (
                <label key={l.key} className="agent-limit">
                  <span>{l.label}</span>
                  <input
                    type="number"
                    min={l.min}
                    max={l.max}
                    data-testid={`sealed-${l.key}`}
                    disabled={off || !policy.enabled}
                    value={drafts[l.key] ?? String(policy[l.key])}
                    onChange={(e) => {
                      // Read now: the updater runs after the event, when currentTarget is null.
                      const text = e.currentTarget.value;
                      setDrafts((d) => ({ ...d, [l.key]: text }));
                    }}
                    onBlur={() => commitLimit(l.key)}
                    onKeyDown={(e) => e.key === 'Enter' && commitLimit(l.key)}
                  />
                </label>
              ))}
            </div>
          </>
        )}
        {showSecrets !== null && (
          <label className="agent-row agent-secrets" data-testid="lever-show_secrets">
            <input type="checkbox" data-testid="agent-show_secrets" checked={showSecrets} disabled={busy} onChange={(e) => void writeShowSecrets(e.currentTarget.checked)} />
            <span className="agent-row-text">
              <span>
                Show credentials in network details <Badge tier="RISKY" />
              </span>
              <span className="agent-row-line">
                <code>ph browser network --id</code> and <code>--har</code> print the values of Authorization, Cookie, Set-Cookie and Proxy-Authorization instead of
                [redacted]. Saved as <code>[agent] show_secrets</code>; only you can turn it on.
              </span>
            </span>
          </label>
        )}
        <div className="agent-probe">
          <strong>Detectability check</strong>
          <span className="agent-row-line">Runs the closed-root probe in a screencast pane’s current page and says what a page script would see.</span>
          {targets.length === 0 ? (
            <span className="agent-row-line" data-testid="sealed-probe-none">Open a screencast pane to check it.</span>
          ) : (
            <span className="agent-probe-run">
              <select data-testid="sealed-probe-target" value={chosen?.browserId} onChange={(e) => setTarget(e.currentTarget.value)}>
                {targets.map((t) => (
                  <option key={t.browserId} value={t.browserId}>
                    {t.label}
                  </option>
                ))}
              </select>
              <button className="panel-btn" data-testid="sealed-probe" onClick={() => void runProbe()}>
                Check
              </button>
            </span>
          )}
          {probe && (
            <ul className="agent-probe-result" data-testid="sealed-probe-result">
              {probe.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          )}
        </div>
        {error && (
          <p className="agent-access-error" data-testid="agent-access-error" role="alert">
            {error}
          </p>
        )}
        <div className="browser-panel-actions">
          <button className="panel-btn" data-testid="agent-access-close" autoFocus onClick={onClose}>
            Close
          </button>
        </div>
        {confirming && (
          <div className="browser-prompt-backdrop" onMouseDown={(e) => e.target === e.currentTarget && setConfirming(false)}>
            <div className="browser-prompt" data-testid="force-open-confirm" role="alertdialog" aria-label="Arm force-open?">
              <p>
                <strong>Arm force-open?</strong> <Badge tier="RISKY" />
              </p>
              <p>
                From their next page load, screencast panes open every closed shadow root at document start, so an agent can read what components keep private. A page’s own scripts can detect this
                (its <code>attachShadow</code> is no longer native) and may behave differently. Each screencast pane shows a red chip while it is armed.
              </p>
              <div className="browser-panel-actions">
                <button className="panel-btn" data-testid="force-open-cancel" autoFocus onClick={() => setConfirming(false)}>
                  Cancel
                </button>
                <button
                  className="panel-btn primary danger"
                  data-testid="force-open-arm"
                  onClick={() => {
                    setConfirming(false);
                    void write({ force_open: true });
                  }}
                >
                  Arm force-open
                </button>
              </div>
            </div>
          </div>
        )}
      </div>
    </div>
  );
}
