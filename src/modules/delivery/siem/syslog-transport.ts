import { isIP } from 'node:net';
import { checkServerIdentity, connect } from 'node:tls';
import type { OutboundGuard } from '../../../lib/outbound/index.ts';
import { describe, type SendOutcome } from '../webhook/webhook-transport.ts';

export interface SyslogTarget {
  host: string;
  port: number;
  verifyTls: boolean;
  caPem: string | null;
}

/**
 * Syslog over TLS (RFC 5425): the host is resolved and judged by the outbound guard first, the
 * connection goes to the address it approved (never to the name again: DNS rebinding), with the
 * host name as TLS server name and certificate identity. Every frame is written, then the
 * connection closed; all of it (name, connect, handshake, write) within `timeoutMs`.
 * Syslog has no acknowledgement: a send counts once the bytes are handed to the connection.
 */
export function createSyslogTransport(deps: { guard: OutboundGuard; timeoutMs: number }) {
  const { timeoutMs } = deps;

  function deliver(target: SyslogTarget, address: string, payload: Buffer, deadline: number) {
    const host = target.host.replace(/^\[|\]$/g, '').toLowerCase();
    return new Promise<void>((resolve, reject) => {
      const socket = connect({
        host: address,
        port: target.port,
        servername: isIP(host) ? undefined : host,
        rejectUnauthorized: target.verifyTls,
        ...(target.caPem ? { ca: target.caPem } : {}),
        checkServerIdentity: (_name, cert) => checkServerIdentity(host, cert),
      });
      const timer = setTimeout(
        () => socket.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { name: 'TimeoutError' })),
        Math.max(0, deadline - performance.now()),
      );
      let done = false;
      const settle = (error?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (error) {
          socket.destroy();
          reject(error);
        } else resolve();
      };
      socket.once('error', settle);
      socket.once('close', () => settle(new Error('the receiver closed the connection before the messages were sent')));
      socket.once('secureConnect', () => {
        socket.end(payload, () => {
          settle();
          socket.destroy();
        });
      });
    });
  }

  return {
    async send(target: SyslogTarget, frames: string[]): Promise<SendOutcome> {
      const started = performance.now();
      const deadline = started + timeoutMs;
      const finish = (outcome: Omit<SendOutcome, 'durationMs'>): SendOutcome => ({
        ...outcome,
        durationMs: Math.round(performance.now() - started),
      });
      try {
        const address = await deps.guard.resolve(target.host, target.port, timeoutMs);
        await deliver(target, address, Buffer.from(frames.join('')), deadline);
        return finish({ ok: true, statusCode: null, error: null });
      } catch (error) {
        return finish({ ok: false, statusCode: null, error: describe(error, timeoutMs) });
      }
    },
  };
}

export type SyslogTransport = ReturnType<typeof createSyslogTransport>;
