// Starts one sidecar in web mode for the whole run (see sidecar.ts). It runs without
// DISPLAY and WAYLAND_DISPLAY, so pop-out is unavailable there whatever the machine has
// (specs/popout.spec.ts starts its own sidecar on an Xvfb). The ready line's url and token
// reach the tests through env vars.
import { startSidecar } from './sidecar';

export default async function globalSetup(): Promise<() => Promise<void>> {
  const s = await startSidecar({ name: 'shared' });
  process.env.PORTHOLE_E2E_URL = s.url;
  process.env.PORTHOLE_E2E_TOKEN = s.token;
  return () => s.stop();
}
