import { defineConfig } from '@playwright/test';

// Drives the real UI (ui/dist) served by the real sidecar in web mode, in Debian's Chromium.
// Never downloads a browser. Build first: `npm run build` in ui/ and `cargo build -p sidecar`.
const root = typeof process.getuid === 'function' && process.getuid() === 0;

export default defineConfig({
  testDir: './specs',
  globalSetup: './global-setup.ts',
  fullyParallel: false,
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  retries: 0,
  reporter: [['list']],
  use: {
    headless: true,
    viewport: { width: 1280, height: 800 },
    colorScheme: 'dark',
    launchOptions: {
      executablePath: process.env.PORTHOLE_CHROMIUM ?? '/usr/bin/chromium',
      args: root ? ['--no-sandbox'] : [],
    },
    trace: 'off',
    screenshot: 'only-on-failure',
  },
  outputDir: process.env.PORTHOLE_E2E_OUT ?? '/tmp/porthole-e2e-results',
});
