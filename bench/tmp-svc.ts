import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
const c = await createContainer(loadConfig({ ...process.env }));
let user = (await c.users.list())[0];
if (!user) { await c.users.create({ orgName: 'Exp', email: 'exp@x.test', password: 'a-very-long-password-1' }); user = (await c.users.list())[0]!; }
const chan = process.argv[3] ? process.argv[3].split(',').map(Number) : undefined;
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  const r = await c.search.search({ orgId: user.org_id, userId: user.id }, { query: process.argv[2]!, page_size: 10, channel_ids: chan });
  console.log(r.total, (performance.now() - t).toFixed(1), 'ms');
}
await c.close();
