/**
 * `npm run bench -- dashboard [--runs n]`
 *
 * 1. First load: the JavaScript index.html loads at once (its module script and the modules it
 *    preloads) as the server sends it (gzip -9 and brotli files written by the build) and raw,
 *    and the stylesheet. Goals: under 300 kB gzipped (issue 14) and 150 kB brotli (issue 25);
 *    the incident page's JavaScript in all (what Chromium fetched to draw it, as sent) under
 *    250 kB brotli. Exit code 1 when over.
 * 2. Time to first results in Debian's Chromium against `npm start` with `dragnet demo`'s data,
 *    from the start of a navigation (or the Enter key) until the first result is drawn:
 *      open (cold)  the address of a search (/search?q=…&history=<id>) in a new tab, HTTP cache
 *                   cleared first: a link from history, a bookmark, a first visit;
 *      open (warm)  the same with the assets cached (they are immutable);
 *      new search   the query typed on the search page, then Enter (the search runs on the server);
 *      notification the incident link of a notification (/incidents/<id>) opened in a new tab,
 *                   cold and warm, until its first hit is drawn (issue 25).
 * The dashboard is built first when web/dist is older than web/src.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { Command } from 'commander';
import type { Page } from 'playwright-core';
import { launchChromium } from '../web/e2e/support/browser.ts';
import { distDir, ensureDashboardBuilt } from '../web/e2e/support/dashboard-build.ts';
import { signInAsDemo, startDashboardServer } from '../web/e2e/support/dashboard-server.ts';
import { createDemoIncident } from '../web/e2e/support/demo-incident.ts';
import { CleanupScope } from './support/cleanup.ts';
import { positive } from './support/options.ts';

const GOAL_GZIP_BYTES = 300 * 1024;
const GOAL_BROTLI_BYTES = 150 * 1024;
const GOAL_INCIDENT_BROTLI_BYTES = 250 * 1024;
const QUERY = '"fresh logs" AND (acme-bank.com OR acmebank.net)';

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

/** The scripts and styles index.html makes the browser fetch before the app can draw anything. */
export function firstLoadFiles(indexHtml: string): { scripts: string[]; styles: string[] } {
  const attribute = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]+)"`).exec(tag)?.[1];
  const tags = indexHtml.match(/<(?:script|link)\b[^>]*>/g) ?? [];
  const scripts = tags
    .filter((tag) => tag.startsWith('<script') || /rel="modulepreload"/.test(tag))
    .map((tag) => attribute(tag, 'src') ?? attribute(tag, 'href'));
  const styles = tags.filter((tag) => /rel="stylesheet"/.test(tag)).map((tag) => attribute(tag, 'href'));
  return {
    scripts: scripts.filter((file): file is string => Boolean(file)),
    styles: styles.filter((file): file is string => Boolean(file)),
  };
}

function sizes(files: string[]) {
  let raw = 0;
  let gzip = 0;
  let brotli = 0;
  for (const file of files) {
    const data = readFileSync(path.join(distDir, file));
    raw += data.length;
    gzip += gzipSync(data, { level: 9 }).length;
    brotli += brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  }
  return { raw, gzip, brotli };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

// Records when the first result (a search's message, an incident's hit) is drawn, by the page's
// own clock (performance.now() counts from the start of the navigation).
const RESULT_WATCH = () => {
  const state = window as unknown as { __firstResult: number | null };
  state.__firstResult = null;
  new MutationObserver(() => {
    if (state.__firstResult === null && document.querySelector('li.result')) state.__firstResult = performance.now();
  }).observe(document, { childList: true, subtree: true });
};

/** The JavaScript a page fetched, as sent (brotli when the browser took it), in bytes. */
const scriptBytes = (page: Page) =>
  page.evaluate(() =>
    (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .filter((entry) => entry.name.endsWith('.js'))
      .reduce((sum, entry) => sum + entry.encodedBodySize, 0),
  );

const firstResultAt = async (page: Page) => {
  await page.waitForFunction(() => (window as unknown as { __firstResult: number | null }).__firstResult !== null);
  return page.evaluate(() => (window as unknown as { __firstResult: number }).__firstResult);
};

export async function run(args: string[]): Promise<void> {
  const options = new Command('dashboard')
    .option('--runs <n>', 'timed runs of each kind', positive('--runs', true, 50), 10)
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .parse(args, { from: 'user' })
    .opts<{ runs: number }>();

  ensureDashboardBuilt();
  const index = readFileSync(path.join(distDir, 'index.html'), 'utf8');
  const { scripts, styles } = firstLoadFiles(index);
  const js = sizes(scripts);
  const css = sizes(styles);
  console.log('Dashboard first load (web/dist)');
  console.log(
    `  JavaScript  ${scripts.length} file(s): ${kB(js.gzip)} gzip, ${kB(js.brotli)} brotli, ${kB(js.raw)} raw   (goals < ${kB(GOAL_GZIP_BYTES)} gzip, < ${kB(GOAL_BROTLI_BYTES)} brotli)`,
  );
  console.log(`  CSS         ${styles.length} file(s): ${kB(css.gzip)} gzip, ${kB(css.raw)} raw`);
  if (js.gzip >= GOAL_GZIP_BYTES || js.brotli >= GOAL_BROTLI_BYTES) process.exitCode = 1;

  const scope = new CleanupScope();
  try {
    const [dashboard, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
    scope.defer('server', () => dashboard.stop());
    scope.defer('browser', () => browser.close());
    await browser.context.addInitScript(RESULT_WATCH);

    const page = await browser.newPage();
    await page.goto(`${dashboard.baseUrl}/sign-in`);
    await signInAsDemo(page, dashboard);
    await page.getByLabel('Query').fill(QUERY);
    await page.getByLabel('Query').press('Enter');
    await firstResultAt(page);
    const searchUrl = page.url();
    const { matchId } = await createDemoIncident(dashboard, QUERY);
    const incidentUrl = `${dashboard.baseUrl}/incidents/${matchId}`;

    const cdp = await browser.context.newCDPSession(page);
    const open = async (url: string, cold: boolean) => {
      if (cold) await cdp.send('Network.clearBrowserCache');
      const tab = await browser.newPage();
      await tab.goto(url);
      const at = await firstResultAt(tab);
      await tab.close();
      return at;
    };

    await cdp.send('Network.clearBrowserCache');
    const incidentTab = await browser.newPage();
    await incidentTab.goto(incidentUrl);
    await firstResultAt(incidentTab);
    // The rule's chart loads in a chunk of its own once the page is drawn: it counts too.
    await incidentTab.locator('figure[aria-label="Matches over time"] svg').first().waitFor();
    const incidentJs = await scriptBytes(incidentTab);
    await incidentTab.close();
    console.log(
      `  Incident page: ${kB(incidentJs)} of JavaScript as sent (brotli)   (goal < ${kB(GOAL_INCIDENT_BROTLI_BYTES)})`,
    );
    if (incidentJs >= GOAL_INCIDENT_BROTLI_BYTES) process.exitCode = 1;
    const newSearch = async () => {
      await page.goto(`${dashboard.baseUrl}/search`);
      await page.getByLabel('Query').fill(QUERY);
      const start = await page.evaluate(() => {
        (window as unknown as { __firstResult: number | null }).__firstResult = null;
        return performance.now();
      });
      await page.getByLabel('Query').press('Enter');
      return (await firstResultAt(page)) - start;
    };

    const kinds: [string, () => Promise<number>][] = [
      ['open (cold cache)', () => open(searchUrl, true)],
      ['open (warm cache)', () => open(searchUrl, false)],
      ['new search', newSearch],
      ['notification (cold)', () => open(incidentUrl, true)],
      ['notification (warm)', () => open(incidentUrl, false)],
    ];
    console.log(
      `\nTime to first results in Chromium (${options.runs} runs each; demo corpus, query ${QUERY}; load average ${load()})`,
    );
    for (const [label, measure] of kinds) {
      await measure(); // warm-up: the server's statement cache, the browser's code cache
      const times: number[] = [];
      for (let i = 0; i < options.runs; i++) times.push(await measure());
      console.log(
        `  ${label.padEnd(20)} median ${percentile(times, 50).toFixed(0)} ms, p90 ${percentile(times, 90).toFixed(0)} ms`,
      );
    }
    console.log(`  load average after: ${load()}`);
    if (browser.problems.length) throw new Error(`the browser reported problems:\n${browser.problems.join('\n')}`);
  } finally {
    await scope.close();
  }
}
