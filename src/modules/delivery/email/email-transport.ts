import { isIP } from 'node:net';
import type { SmtpConfig } from '../../../config.ts';
import { BlockedAddressError, type OutboundGuard } from '../../../lib/outbound/index.ts';
import type { RenderedEmail } from './template-render.ts';

export interface SmtpAccount {
  from: string;
  host: string;
  port: number;
  /** spec 2.6: TLS upgrades with STARTTLS before authenticating (and fails without it); SSL is plaintext. */
  encryption: 'SSL' | 'TLS';
  authenticationRequired: boolean;
  username: string | null;
  password: string | null;
  /**
   * The system sender (DRAGNET_SYSTEM_SMTP_URL): the operator's own relay, often on loopback or
   * the private network. It is not judged by the outbound guard, rather than put on the
   * allow-list, which would open the relay to every tenant's senders too.
   */
  operatorSet: boolean;
}

export interface EmailOutcome {
  ok: boolean;
  error: string | null;
  durationMs: number;
}

/** What each nodemailer error code means, in our words: a peer's reply text never reaches the log. */
const FAILURES: Record<string, string> = {
  ECONNECTION: 'the connection to the SMTP server failed',
  ESOCKET: 'the connection to the SMTP server failed',
  ETIMEDOUT: 'the SMTP server did not answer in time (greeting or reply)',
  ETLS: 'TLS with the SMTP server failed',
  EAUTH: 'the SMTP server refused the login',
  ENOAUTH: 'the SMTP server requires a login and the sender has none',
  EENVELOPE: 'the SMTP server refused the sender or a recipient',
  EMESSAGE: 'the SMTP server refused the message',
  EPROTOCOL: 'the SMTP server answered outside the SMTP protocol',
  EDNS: 'the SMTP server name did not resolve',
  ENOTFOUND: 'the SMTP server name did not resolve',
};

/**
 * The delivery log's text for a failed send: a fixed sentence per nodemailer code, the SMTP reply
 * code and the command we sent, and a system error code (ECONNREFUSED); never the server's reply
 * or greeting, which is the peer's bytes (a MySQL greeting holds a NUL; another service's banner
 * would be shown to the tenant who pointed a sender at it).
 */
function describeSmtpFailure(error: unknown): string {
  if (error instanceof BlockedAddressError) return `refused: ${error.message}`;
  const e = error as {
    code?: unknown;
    originalCode?: unknown;
    responseCode?: unknown;
    command?: unknown;
    message?: unknown;
  };
  const code = typeof e.code === 'string' ? e.code : '';
  // Node's own error code (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT), never the server's words.
  const systemCode = [e.originalCode, code].find(
    (c): c is string => typeof c === 'string' && /^[A-Z][A-Z0-9_]{2,40}$/.test(c) && !(c in FAILURES),
  );
  const certificate =
    /CERT|SIGNATURE|ISSUER/.test(systemCode ?? '') ||
    (code === 'ETLS' && typeof e.message === 'string' && /certificate/i.test(e.message));
  let text = certificate
    ? `${FAILURES.ETLS}: the server's certificate was not accepted`
    : (FAILURES[code] ?? 'sending failed');
  if (systemCode) text += ` (${systemCode})`;
  const reply = typeof e.responseCode === 'number' && Number.isInteger(e.responseCode) ? e.responseCode : null;
  const command =
    typeof e.command === 'string' && /^[A-Z][A-Z0-9 -]{0,23}$/.test(e.command) && e.command !== 'API'
      ? e.command
      : null;
  if (reply !== null) text += ` (SMTP ${reply}${command ? ` after ${command}` : ''})`;
  else if (command && command !== 'CONN') text += ` (after ${command})`;
  return text;
}

/**
 * Sends through nodemailer to the address the outbound guard checked, never to the name (which
 * could resolve elsewhere the second time); STARTTLS still names the host (SNI, certificate).
 */
export function createEmailTransport(options: SmtpConfig & { guard: OutboundGuard }) {
  return {
    async send(account: SmtpAccount, to: string[], message: RenderedEmail): Promise<EmailOutcome> {
      const started = performance.now();
      const failed = (error: unknown): EmailOutcome => ({
        ok: false,
        error: describeSmtpFailure(error),
        durationMs: Math.round(performance.now() - started),
      });
      let address = account.host;
      try {
        if (!account.operatorSet) address = await options.guard.resolve(account.host, account.port, options.timeoutMs);
      } catch (error) {
        return failed(error);
      }
      // Loaded with the first email: most processes (every `dragnet` command) send none.
      const { default: nodemailer } = await import('nodemailer');
      const servername = isIP(account.host) ? undefined : account.host;
      const transporter = nodemailer.createTransport({
        host: address,
        port: account.port,
        secure: false,
        requireTLS: account.encryption === 'TLS',
        ignoreTLS: account.encryption === 'SSL',
        auth:
          account.authenticationRequired && account.username
            ? { user: account.username, pass: account.password ?? '' }
            : undefined,
        connectionTimeout: options.timeoutMs,
        greetingTimeout: options.timeoutMs,
        socketTimeout: options.timeoutMs,
        tls: {
          rejectUnauthorized: !options.allowSelfSigned,
          ...(servername ? { servername } : {}),
          ...(options.ca ? { ca: options.ca } : {}),
        },
        logger: false,
        debug: false,
      });
      try {
        await transporter.sendMail({
          from: account.from,
          to,
          subject: message.subject,
          html: message.html,
          text: message.text,
        });
        return { ok: true, error: null, durationMs: Math.round(performance.now() - started) };
      } catch (error) {
        return failed(error);
      } finally {
        transporter.close();
      }
    },
  };
}

export type EmailTransport = ReturnType<typeof createEmailTransport>;
