import { describe, expect, it } from 'vitest';
import { parseAllowList } from './allow-list.ts';
import { createOutboundGuard } from './outbound-guard.ts';

/**
 * The resolver is the one part stood in for here: the test machine's name server is not on
 * loopback, and a real resolver cannot be made to hang without sending traffic to it.
 */
describe('outbound guard: name resolution', () => {
  it("gives up on a name that does not resolve within the caller's timeout", async () => {
    const guard = createOutboundGuard(parseAllowList([]), { lookup: () => new Promise(() => undefined) });
    const started = performance.now();
    await expect(guard.resolve('feed.example', 443, 50)).rejects.toThrow(
      'feed.example: the name did not resolve within 50 ms',
    );
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('judges what the resolver answers in time', async () => {
    const guard = createOutboundGuard(parseAllowList([]), { lookup: async () => [{ address: '10.0.0.1', family: 4 }] });
    await expect(guard.resolve('feed.example', 443, 1000)).rejects.toThrow(
      'feed.example resolves to 10.0.0.1, which is not a public address (private)',
    );
    const publicGuard = createOutboundGuard(parseAllowList([]), {
      lookup: async () => [
        { address: '2606:4700:4700::1111', family: 6 },
        { address: '1.1.1.1', family: 4 },
      ],
    });
    expect(await publicGuard.resolve('feed.example', 443, 1000)).toBe('1.1.1.1');
  });
});
