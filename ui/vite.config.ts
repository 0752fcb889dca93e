import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// `base: './'` keeps asset URLs relative, so the build works wherever the sidecar serves it.
export default defineConfig({
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 2048 },
  server: {
    // `npm run dev`: point PORTHOLE_SIDECAR at a running sidecar (e.g. http://127.0.0.1:41234).
    proxy: process.env.PORTHOLE_SIDECAR
      ? { '/api': { target: process.env.PORTHOLE_SIDECAR, ws: true, changeOrigin: true } }
      : undefined,
  },
  test: { include: ['src/**/*.test.ts'], environment: 'node' },
});
