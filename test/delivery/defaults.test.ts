import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deliveryUser,
  NO_RATE_LIMITS,
  senderBody,
  templateBody,
  webhookBody,
  type DeliveryApi,
  type DeliveryResource,
} from '../support/delivery-api.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const bodies: Record<DeliveryResource, (n: number, extra?: Record<string, unknown>) => Record<string, unknown>> = {
  recipient: (n, extra = {}) => ({ email: `r${n}@org.test`, ...extra }),
  sender: (n, extra = {}) => senderBody(`s${n}@org.test`, extra),
  template: (n, extra = {}) => templateBody(`Template ${n}`, extra),
  webhook: (n, extra = {}) => webhookBody(`Hook ${n}`, extra),
};
const updatable = (resource: DeliveryResource) => resource === 'template' || resource === 'webhook';

/** spec 3.5: exactly one default of each delivery resource type per organization. */
describe(`delivery defaults (${testEngine})`, () => {
  let t: TestApp;
  let seq = 0;
  const freshOrg = async () => {
    seq += 1;
    return deliveryUser(t, `Org ${seq}`, `user${seq}@org${seq}.test`);
  };

  beforeAll(async () => {
    t = await createTestApp({ env: NO_RATE_LIMITS });
  });
  afterAll(() => t?.close());

  /** The ids of the defaults; the system sender is not configured in this app. */
  const defaults = async (api: DeliveryApi, resource: DeliveryResource) =>
    (await api.listAll<{ id: number; is_default: boolean }>(resource)).filter((x) => x.is_default).map((x) => x.id);

  for (const resource of ['recipient', 'sender', 'template', 'webhook'] as const) {
    describe(resource, () => {
      it('the first one created is the default, later ones are not', async () => {
        const api = await freshOrg();
        const first = await api.created(resource, bodies[resource](1));
        const second = await api.created(resource, bodies[resource](2));
        const third = await api.created(resource, bodies[resource](3, { is_default: false }));
        expect(first.is_default).toBe(true);
        expect(second.is_default).toBe(false);
        expect(third.is_default).toBe(false);
        expect(await defaults(api, resource)).toEqual([first.id]);
      });

      it('is_default: true on create moves the default', async () => {
        const api = await freshOrg();
        const first = await api.created(resource, bodies[resource](1));
        const second = await api.created(resource, bodies[resource](2, { is_default: true }));
        expect(second.is_default).toBe(true);
        expect(await defaults(api, resource)).toEqual([second.id]);
        const third = await api.created(resource, bodies[resource](3, { is_default: true }));
        expect(await defaults(api, resource)).toEqual([third.id]);
        expect(first.id).not.toBe(third.id);
      });

      if (updatable(resource)) {
        it('is_default: true on update moves the default; is_default: false never leaves none', async () => {
          const api = await freshOrg();
          const first = await api.created(resource, bodies[resource](1));
          const second = await api.created(resource, bodies[resource](2));
          const third = await api.created(resource, bodies[resource](3));
          const moved = await api.update(resource, third.id, bodies[resource](3, { is_default: true }));
          expect(moved.statusCode, moved.body).toBe(200);
          expect(moved.json().is_default).toBe(true);
          expect(await defaults(api, resource)).toEqual([third.id]);

          // An update without is_default keeps the default where it is.
          expect((await api.update(resource, second.id, bodies[resource](2))).json().is_default).toBe(false);
          expect((await api.update(resource, third.id, bodies[resource](3))).json().is_default).toBe(true);
          expect(await defaults(api, resource)).toEqual([third.id]);

          // Giving it up still leaves exactly one default.
          expect((await api.update(resource, third.id, bodies[resource](3, { is_default: false }))).statusCode).toBe(
            200,
          );
          const now = await defaults(api, resource);
          expect(now).toHaveLength(1);
          expect(now).not.toEqual([third.id]);
          expect([first.id, second.id]).toContain(now[0]);
        });
      }

      it('deleting the default promotes the oldest remaining one; deleting others leaves it alone', async () => {
        const api = await freshOrg();
        const ids: number[] = [];
        for (let i = 1; i <= 4; i++) ids.push((await api.created(resource, bodies[resource](i))).id);
        // Make the third the default, then delete it: the oldest remaining (the first) takes over.
        const made = await api.created(resource, bodies[resource](5, { is_default: true }));
        expect((await api.remove(resource, made.id)).statusCode).toBe(204);
        expect(await defaults(api, resource)).toEqual([ids[0]]);

        expect((await api.remove(resource, ids[2]!)).statusCode).toBe(204);
        expect(await defaults(api, resource)).toEqual([ids[0]]);

        expect((await api.remove(resource, ids[0]!)).statusCode).toBe(204);
        expect(await defaults(api, resource)).toEqual([ids[1]]);
      });

      it('after the last one is deleted, the next one created is the default again', async () => {
        const api = await freshOrg();
        const only = await api.created(resource, bodies[resource](1));
        expect((await api.remove(resource, only.id)).statusCode).toBe(204);
        const next = await api.created(resource, bodies[resource](2));
        expect(next.is_default).toBe(true);
        expect(await defaults(api, resource)).toEqual([next.id]);
      });

      it('10 parallel creates with is_default: true leave exactly one default', async () => {
        const api = await freshOrg();
        const responses = await Promise.all(
          Array.from({ length: 10 }, (_, i) => api.create(resource, bodies[resource](i + 1, { is_default: true }))),
        );
        for (const response of responses) expect(response.statusCode, response.body).toBe(201);
        const result = await defaults(api, resource);
        expect(result).toHaveLength(1);
        expect(responses.map((r) => r.json().id)).toContain(result[0]);
      });

      if (updatable(resource)) {
        it('10 parallel updates with is_default: true leave exactly one default', async () => {
          const api = await freshOrg();
          const ids: number[] = [];
          for (let i = 1; i <= 10; i++) ids.push((await api.created(resource, bodies[resource](i))).id);
          const responses = await Promise.all(
            ids.map((id, i) => api.update(resource, id, bodies[resource](i + 1, { is_default: true }))),
          );
          for (const response of responses) expect(response.statusCode, response.body).toBe(200);
          const result = await defaults(api, resource);
          expect(result).toHaveLength(1);
          expect(ids).toContain(result[0]);
        });

        it('parallel creates and updates mixed, all with is_default: true, leave exactly one default', async () => {
          const api = await freshOrg();
          const ids: number[] = [];
          for (let i = 1; i <= 5; i++) ids.push((await api.created(resource, bodies[resource](i))).id);
          const responses = await Promise.all([
            ...ids.map((id, i) => api.update(resource, id, bodies[resource](i + 1, { is_default: true }))),
            ...Array.from({ length: 5 }, (_, i) => api.create(resource, bodies[resource](i + 6, { is_default: true }))),
          ]);
          for (const response of responses) expect([200, 201], response.body).toContain(response.statusCode);
          expect(await defaults(api, resource)).toHaveLength(1);
        });
      }
    });
  }

  it('defaults are per organization: a default in one does not unset the other', async () => {
    const a = await freshOrg();
    const b = await freshOrg();
    const inA = await a.created('recipient', { email: 'x@a.test' });
    const inB = await b.created('recipient', { email: 'x@b.test' });
    await a.created('recipient', { email: 'y@a.test', is_default: true });
    expect(await defaults(b, 'recipient')).toEqual([inB.id]);
    expect(await defaults(a, 'recipient')).not.toContain(inA.id);
  });

  it('the built-in default template gives way to a new default and comes back only while there is none', async () => {
    const api = await freshOrg();
    const [builtIn] = await api.listAll<{ id: number; is_default: boolean }>('template');
    expect(builtIn!.is_default).toBe(true);
    const mine = await api.created('template', templateBody('Mine', { is_default: true }));
    expect(await defaults(api, 'template')).toEqual([mine.id]);
    expect((await api.remove('template', mine.id)).statusCode).toBe(204);
    expect(await defaults(api, 'template')).toEqual([builtIn!.id]);
  });
});
