import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics, REQUEST_BUCKETS } from './metrics.ts';

const NAME = 'dragnet_http_request_duration_seconds';

/** The lines of one metric family in an exposition, in a stable order. */
const family = (text: string, name: string) =>
  text
    .split('\n')
    .filter(
      (line) => line.startsWith(`${name}_`) || line.startsWith(`# HELP ${name} `) || line.startsWith(`# TYPE ${name} `),
    )
    .sort();

describe('the request-duration histogram', () => {
  it('exposes what a prom-client Histogram of the same observations exposes', async () => {
    const metrics = createMetrics({ queueDepth: () => Promise.resolve([]) });
    const registry = new Registry();
    const reference = new Histogram({
      name: NAME,
      help: 'HTTP requests by route pattern (not raw URL), method and status; _count is the request count',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: REQUEST_BUCKETS,
      registers: [registry],
    });
    const requests: [string, string, number, number][] = [
      ['GET', '/service/account/', 200, 0.0004],
      ['GET', '/service/account/', 200, 0.001],
      ['GET', '/service/account/', 200, 0.0011],
      ['HEAD', '/service/account/', 200, 0.0002],
      ['GET', '/service/account/', 429, 0.0003],
      ['POST', '/token/', 200, 0.25],
      ['GET', '/service/search/', 200, 45],
      ['GET', 'unmatched', 404, 0.002],
      ['GET', '/q"\\uoted\n/', 200, 0.003],
    ];
    for (const [method, route, status, seconds] of requests) {
      metrics.request(method, route, status, seconds);
      reference.observe({ method, route, status_code: status }, seconds);
    }
    const ours = family(await metrics.render(), NAME);
    expect(ours.length).toBe(2 + 7 * 17);
    expect(ours).toEqual(family(await registry.metrics(), NAME));
  });
});
