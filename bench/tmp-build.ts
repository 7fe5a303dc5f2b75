import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { generateCorpus } from '../src/modules/search/demo-corpus.ts';
const n = Number(process.argv[2] ?? 200000);
const c = await createContainer(loadConfig({ ...process.env, DRAGNET_DATA_DIR: process.env.DIR ?? '/tmp/exp/data' }));
const { sql } = await import('kysely');
if (process.env.AM) await sql.raw(`insert into messages_fts (messages_fts, rank) values ('automerge', ${process.env.AM})`).execute(c.store.db);
const gen = generateCorpus({ seed: 424242, channels: 500, messages: n, start: new Date('2025-01-01T00:00:00Z'), spanDays: 365,
  needles: [{ text: 'SSO.Zorbex-Payroll.com', count: 37 }, { text: 'Private ACCESS to the full Acme payroll database', count: 12 }], batchSize: 1000 });
let chunk = []; let ms = 0; let done = 0;
for (const b of gen) { chunk.push(b); if (chunk.length === 50) { const t = performance.now(); await c.corpus.write(chunk); ms += performance.now() - t; done += 50000; chunk = [];
  if (done % 200000 === 0) console.log(done, Math.round(done / ms * 1000), 'msg/s'); } }
console.log('rate', Math.round(n / ms * 1000), 'msg/s');
await c.close();
