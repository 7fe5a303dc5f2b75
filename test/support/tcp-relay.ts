import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP relay to `target` (a database or Redis URL) that a test can cut and restore:
 * the peer going away as a restart, a failover or a network break makes it go away. `url()` is
 * `target` through the relay.
 */
export async function startRelay(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = createConnection({
          host: target.hostname,
          port: Number(target.port || (target.protocol.startsWith('redis') ? 6379 : 5432)),
        });
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      // Restored on the port it had: a port taken meanwhile fails the test, not the process.
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  return {
    url: () => {
      const url = new URL(target);
      url.host = `127.0.0.1:${port}`;
      return url.toString();
    },
    async cut() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server!.close(resolve));
    },
    restore: listen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      if (server?.listening) await new Promise((resolve) => server!.close(resolve));
    },
  };
}

export type TcpRelay = Awaited<ReturnType<typeof startRelay>>;
