// The text a screencast pane shows for a failed browser request (protocol §3, §8.3).
import { ApiError } from '../api/client';

/**
 * The pane's text for a failed `POST /api/browsers` or `…/navigate`. `403 blocked_address` is
 * the sidecar refusing the address (link-local or cloud metadata, protocol §8.2), not a
 * Chromium failure: it says so, with the sidecar's message. Anything else from a create is a
 * Chromium start failure (`create: true`); from another call, the sidecar's message as is.
 */
export function browserErrorText(e: unknown, create: boolean): string {
  const message = e instanceof ApiError ? e.message : String(e);
  if (e instanceof ApiError && e.code === 'blocked_address') return `Porthole refuses this address: ${message}`;
  return create ? `Couldn't start Chromium for this page: ${message}` : message;
}
