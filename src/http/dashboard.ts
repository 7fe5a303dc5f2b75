import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { varyOnAcceptEncoding } from './compression.ts';
import { sendError } from './error-handler.ts';
import { securityHeaders } from './security-headers.ts';

/**
 * Paths of the API and of operations: an unknown one answers the JSON 404, never the dashboard,
 * so a client that mistypes an endpoint gets an error it can read.
 */
const API_PATH = /^\/(?:service|token|docs|ingest|openapi\.json|metrics|readyz|healthz)(?:[/?]|$)/;

/**
 * A request for a file (under /assets/, or its last segment has an extension): a missing asset is
 * a 404, not the app.
 */
const FILE_PATH = /^\/assets(?:\/|$)|\/[^/]*\.[^/]*$/;

/**
 * A browser opening a page asks for HTML; an API client that gets a path wrong (curl's default
 * Accept of any type, application/json) gets the JSON 404 it can read.
 */
const WANTS_HTML = /\btext\/html\b|\bapplication\/xhtml\+xml\b/;

// The built app loads only its own scripts, styles and data: URLs (the 2FA QR code); nothing
// inline, nothing from elsewhere.
const SECURITY_HEADERS = securityHeaders(
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'",
);

export interface Dashboard {
  /** Serves web/dist: hashed assets cached for a year, everything else revalidated each time. */
  register(app: FastifyInstance): Promise<void>;
  /**
   * For the not-found handler: answers a browser's GET of a dashboard route (/search,
   * /settings/security, …) with index.html, whose router shows the page. False when the request
   * is not one.
   */
  serveAppShell(request: FastifyRequest, reply: FastifyReply): boolean;
}

export function createDashboard(dir: string): Dashboard {
  const built = existsSync(path.join(dir, 'index.html'));
  const assets = path.join(dir, 'assets') + path.sep;
  return {
    async register(app) {
      if (!built) return;
      await app.register(fastifyStatic, {
        root: dir,
        // A route per file found at start (no catch-all route), so every other path keeps the
        // API's not-found and method-not-allowed answers. A rebuilt dashboard needs a restart.
        wildcard: false,
        // The build writes .br and .gz beside each file (web/vite.config.ts).
        preCompressed: true,
        cacheControl: false,
        setHeaders(response, file) {
          const hashed = file.startsWith(assets);
          response.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
          // Any file may have a .br or .gz beside it, sent to the clients that take it: a cache
          // must keep the encodings apart.
          response.setHeader('vary', varyOnAcceptEncoding(response.getHeader('vary')));
          if (file.endsWith('.html'))
            for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
        },
      });
    },
    serveAppShell(request, reply) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      if (!WANTS_HTML.test(request.headers.accept ?? '')) return false;
      const pathname = request.url.split('?')[0] ?? '/';
      if (API_PATH.test(pathname) || FILE_PATH.test(pathname)) return false;
      if (built) void reply.sendFile('index.html');
      else
        void sendError(
          request,
          reply,
          new AppError('not_found', `the dashboard is not built in ${dir}: run \`npm run build:web\``),
        );
      return true;
    },
  };
}
