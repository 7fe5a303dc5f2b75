import autocannon from 'autocannon';

export interface LoadOptions {
  connections: number;
  /** Seconds of measured load. */
  duration: number;
  /** Seconds of unmeasured load first (JIT, connection pools, caches). */
  warmup: number;
  headers?: Record<string, string>;
}

export interface LoadFigures {
  /** Mean requests per second over the measured seconds (autocannon's "Req/Sec" average). */
  rps: number;
  /** Latency percentiles in milliseconds, from every 2xx response of the measured run. */
  p50: number;
  p99: number;
  max: number;
  requests: number;
  errors: number;
  non2xx: number;
}

function fire(
  url: string,
  options: { connections: number; duration: number; headers?: Record<string, string> },
  onResponse?: (statusCode: number, responseTimeMs: number) => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections: options.connections, duration: options.duration, headers: options.headers, timeout: 10 },
      (error: unknown, result: autocannon.Result) =>
        error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result),
    );
    if (onResponse) {
      instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) =>
        onResponse(statusCode, responseTime),
      );
    }
  });
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/**
 * Loads `url` with autocannon from this process: a warm-up run whose results are thrown away,
 * then the measured run. autocannon's own latency histogram has 1 ms resolution, too coarse for
 * sub-millisecond routes, so percentiles come from the response times it reports per request.
 * Throws if any measured request failed or was not 2xx, since fast error responses would
 * flatter the figures.
 */
export async function measure(url: string, options: LoadOptions): Promise<LoadFigures> {
  if (options.warmup > 0) await fire(url, { ...options, duration: options.warmup });
  const times: number[] = [];
  const statuses = new Map<number, number>();
  const result = await fire(url, options, (statusCode, responseTime) => {
    statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
    if (statusCode >= 200 && statusCode < 300) times.push(responseTime);
  });
  const sorted = Float64Array.from(times).sort();
  const figures: LoadFigures = {
    rps: result.requests.average,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
    requests: result.requests.total,
    errors: result.errors,
    non2xx: result.non2xx,
  };
  if (figures.errors > 0 || figures.non2xx > 0 || figures.requests === 0) {
    throw new Error(
      `load on ${url} was not clean: ${figures.requests} requests, ${figures.errors} errors, ` +
        `${figures.non2xx} non-2xx responses (status: count ${[...statuses].map(([status, count]) => `${status}: ${count}`).join(', ')})`,
    );
  }
  return figures;
}

/**
 * One slice of load with autocannon on one URL, or on several at once (one autocannon instance
 * per URL, the connections split evenly: autocannon's own list of URLs served two servers at
 * less than half the rate of one). Unlike measure() it accepts a slice in which no request
 * completed (a stalled server is a result, not a broken run); any error or non-2xx response (a
 * 429 would mean the raised limits did not apply) still fails the run.
 */
export async function loadSlice(
  target: { url: string | string[]; headers?: Record<string, string> },
  connections: number,
  duration: number,
): Promise<LoadFigures> {
  const urls = typeof target.url === 'string' ? [target.url] : target.url;
  const times: number[] = [];
  await Promise.all(
    urls.map(
      (url) =>
        new Promise<void>((resolve, reject) => {
          const instance = autocannon(
            {
              url,
              connections: Math.max(1, Math.round(connections / urls.length)),
              duration,
              headers: target.headers,
              timeout: 10,
            },
            (error: unknown, result: autocannon.Result) => {
              if (error) return reject(error instanceof Error ? error : new Error(String(error)));
              if (result.errors > 0 || result.non2xx > 0) {
                return reject(
                  new Error(
                    `load on ${url} was not clean: ${result.errors} errors, ${result.non2xx} non-2xx responses`,
                  ),
                );
              }
              resolve();
            },
          );
          instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
            if (statusCode >= 200 && statusCode < 300) times.push(responseTime);
          });
        }),
    ),
  );
  const sorted = Float64Array.from(times).sort();
  return {
    rps: times.length / duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    requests: times.length,
    errors: 0,
    non2xx: 0,
  };
}

/** Slices of one side merged: requests/s over all its slices, medians of the slice percentiles. */
export function combineSlices(slices: LoadFigures[], sliceSeconds: number): LoadFigures {
  const requests = slices.reduce((sum, f) => sum + f.requests, 0);
  const answered = slices.filter((f) => f.requests > 0);
  return {
    rps: requests / (slices.length * sliceSeconds),
    p50: median(answered.map((f) => f.p50)),
    p99: median(answered.map((f) => f.p99)),
    max: Math.max(...answered.map((f) => f.max)),
    requests,
    errors: slices.reduce((sum, f) => sum + f.errors, 0),
    non2xx: slices.reduce((sum, f) => sum + f.non2xx, 0),
  };
}

export const ms = (value: number) => value.toFixed(2);
export const int = (value: number) => Math.round(value).toLocaleString('en-US');

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Medians of each figure over the rounds (one round: the figures themselves). */
export function medianFigures(all: LoadFigures[]): LoadFigures {
  const of = (key: keyof LoadFigures) => median(all.map((figures) => figures[key]));
  return {
    rps: of('rps'),
    p50: of('p50'),
    p99: of('p99'),
    max: of('max'),
    requests: of('requests'),
    errors: of('errors'),
    non2xx: of('non2xx'),
  };
}
