import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

const sidecar = process.env.PORTHOLE_SIDECAR;

// `base: './'` keeps asset URLs relative, so the build works wherever the sidecar serves it.
export default defineConfig({
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 2048 },
  server: {
    // `npm run dev`: point PORTHOLE_SIDECAR at a running sidecar (e.g. http://127.0.0.1:41234)
    // and open its login URL once (the session cookie is per host, not per port).
    proxy: sidecar
      ? {
          '/api': {
            target: sidecar,
            ws: true,
            changeOrigin: true,
            // The sidecar checks Origin on upgrades and writes: present its own.
            configure: (proxy) => {
              const origin = new URL(sidecar).origin;
              proxy.on('proxyReq', (req) => req.setHeader('origin', origin));
              proxy.on('proxyReqWs', (req) => req.setHeader('origin', origin));
            },
          },
        }
      : undefined,
  },
  test: { include: ['src/**/*.test.ts'], environment: 'node' },
});
