import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
const c = await createContainer(loadConfig({ ...process.env }));
const user = (await c.users.list())[0]!;
for (const [q, ch] of [['zorbex-payroll.com'], ['password'], ['billing42@globex.com AND password'], ['"access to the full acme payroll database"'], ['password', [26, 126, 226, 326, 426]]] as [string, number[]?][]) {
  const xs: number[] = [];
  for (let i = 0; i < 6; i++) { const t = performance.now(); await c.search.search({ orgId: user.org_id, userId: user.id }, { query: q, page_size: 10, channel_ids: ch }); xs.push(performance.now() - t); }
  console.log(q, ch ?? '', xs.map((x) => x.toFixed(1)).join(' '));
}
await c.close();
