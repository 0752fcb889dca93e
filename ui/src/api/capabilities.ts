// `GET /api/capabilities` (protocol §8.5) parsed at the boundary: the api layer's own, so the
// client imports no feature module.
import type { PopoutCapability } from './protocol';

/**
 * Parses `GET /api/capabilities`'s body. Throws (with what is wrong) unless it is
 * `{"popout":{"available":bool,"reason":string|null}}` with a reason exactly when unavailable.
 */
export function parseCapabilities(v: unknown): PopoutCapability {
  const p = typeof v === 'object' && v !== null ? (v as Record<string, unknown>).popout : undefined;
  if (typeof p !== 'object' || p === null) throw new Error('capabilities: no popout object');
  const { available, reason } = p as Record<string, unknown>;
  if (typeof available !== 'boolean') throw new Error('capabilities: popout.available is not a boolean');
  if (available ? reason !== null : typeof reason !== 'string' || reason === '') {
    throw new Error('capabilities: popout.reason must be null when available, else a sentence');
  }
  return { available, reason: reason as string | null };
}
