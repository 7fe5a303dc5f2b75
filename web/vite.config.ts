import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/**
 * The dashboard build: `npm run build:web` writes web/dist, which the server serves at `/`
 * (src/http/dashboard.ts). `npm run dev:web` serves it with hot reload and forwards the API
 * paths to a server on :8080 (DRAGNET_API_URL to change it).
 */
const api = process.env.DRAGNET_API_URL ?? 'http://127.0.0.1:8080';

/** Writes .br and .gz beside every text file, so the server sends them without compressing per request. */
function precompress(): Plugin {
  return {
    name: 'dragnet-precompress',
    apply: 'build',
    writeBundle(options, bundle) {
      for (const name of Object.keys(bundle)) {
        if (!/\.(?:js|css|html|svg|json)$/.test(name)) continue;
        const file = path.join(options.dir!, name);
        const data = readFileSync(file);
        if (data.length < 1024) continue;
        writeFileSync(`${file}.gz`, gzipSync(data, { level: 9 }));
        writeFileSync(`${file}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), precompress()],
  resolve: {
    // The source search's export writes CSV with the server's writer (src/lib/csv.ts); csv-stringify's
    // Node build needs Buffer, its browser build carries its own.
    alias: [{ find: /^csv-stringify\/sync$/, replacement: 'csv-stringify/browser/esm/sync' }],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hashed file names under assets/: the server marks them immutable.
    assetsDir: 'assets',
    target: 'es2022',
    reportCompressedSize: false,
  },
  server: {
    proxy: Object.fromEntries(['/service', '/token', '/docs', '/openapi.json'].map((prefix) => [prefix, api])),
  },
});
