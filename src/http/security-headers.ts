import type { FastifyInstance } from 'fastify';

/**
 * The headers every page the server renders carries (the dashboard's index.html, the API
 * documentation): its content security policy, and no MIME sniffing, no referrer and no framing
 * (clickjacking) whatever the policy allows.
 */
export function securityHeaders(contentSecurityPolicy: string): Record<string, string> {
  return {
    'content-security-policy': `${contentSecurityPolicy}; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  };
}

// Swagger UI loads only its own scripts and styles from /docs/static/ (no inline script); it
// draws icons as data: images and fetches the document from /docs/json.
const DOCS_HEADERS = securityHeaders(
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'",
);

/** Every response of the routes `scope` registers carries the documentation's security headers. */
export function guardDocumentation(scope: FastifyInstance): void {
  scope.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(DOCS_HEADERS);
    done(null, payload);
  });
}
