/** A request from a benchmark: the parsed JSON body, or the text when it is not JSON (for error messages). */
export async function httpJson(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text for the error message
  }
  return { status: response.status, headers: response.headers, body };
}

/** Runs `work` but gives up (and lets cleanup run) after `ms`. */
export async function withDeadline<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
