import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopperOf } from './child-server.ts';
import type { CleanupScope } from './cleanup.ts';
import type { LoadFigures } from './load.ts';

const ENTRY = fileURLToPath(new URL('./load-generator.child.ts', import.meta.url));

export interface LoadGenerator {
  pid: number;
  /**
   * One slice of load (loadSlice in the child) and the CPU seconds the generator spent on it,
   * measured by the child itself with process.cpuUsage (microsecond resolution).
   */
  slice(
    target: { url: string; headers?: Record<string, string> },
    connections: number,
    seconds: number,
  ): Promise<{ figures: LoadFigures; cpuSeconds: number }>;
}

/** Forks the autocannon child (stopped when `scope` closes) and waits until it is ready. */
export async function startLoadGenerator(scope: CleanupScope): Promise<LoadGenerator> {
  const child = fork(ENTRY, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  scope.defer(`stop the load generator (pid ${child.pid})`, stopperOf(child));
  type Reply = { id: number; figures?: LoadFigures; cpuSeconds?: number; error?: string };
  const waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  child.on('exit', (code, signal) => {
    for (const { reject } of waiting.values())
      reject(new Error(`the load generator exited (code ${code}, signal ${signal})`));
    waiting.clear();
  });
  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: { type?: string }) => {
      if (message?.type !== 'ready') return;
      child.off('message', onMessage).off('exit', onExit);
      resolve();
    };
    const onExit = (code: number | null) => reject(new Error(`the load generator exited at start (code ${code})`));
    child.on('message', onMessage).once('exit', onExit);
  });
  child.on('message', (reply: Reply) => {
    const pending = waiting.get(reply.id);
    if (!pending) return;
    waiting.delete(reply.id);
    pending.resolve(reply);
  });
  let next = 0;
  return {
    pid: child.pid!,
    async slice(target, connections, seconds) {
      const id = ++next;
      const reply = await new Promise<Reply>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        child.send({ id, url: target.url, headers: target.headers, connections, seconds });
      });
      if (reply.error !== undefined) throw new Error(reply.error);
      return { figures: reply.figures!, cpuSeconds: reply.cpuSeconds! };
    },
  };
}
