/**
 * The load generator in a process of its own (bench/support/load-generator.ts): autocannon
 * runs here, so its CPU time is its own and no benchmark bookkeeping shares its event loop.
 * Each IPC message `{ id, url, headers, connections, seconds }` runs one loadSlice and answers
 * `{ id, figures, cpuSeconds }` (this process's user + system time during the slice) or
 * `{ id, error }`. Exits when the parent goes away.
 */
import { loadSlice } from './load.ts';

interface SliceRequest {
  id: number;
  url: string;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
}

const send = (message: unknown) => process.send?.(message);

process.on('message', (message: SliceRequest) => {
  const before = process.cpuUsage();
  loadSlice({ url: message.url, headers: message.headers }, message.connections, message.seconds).then(
    (figures) => {
      const used = process.cpuUsage(before);
      send({ id: message.id, figures, cpuSeconds: (used.user + used.system) / 1e6 });
    },
    (error: unknown) => send({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
process.once('disconnect', () => process.exit(0));
send({ type: 'ready' });
