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
}

export interface EmailOutcome {
  ok: boolean;
  error: string | null;
  durationMs: number;
}

export interface EmailTransportOptions {
  timeoutMs: number;
  /** Trust self-signed SMTP certificates (DRAGNET_SMTP_ALLOW_SELF_SIGNED, for test servers). */
  allowSelfSigned: boolean;
  /** Extra trusted CA in PEM (DRAGNET_SMTP_CA_FILE). */
  ca?: string;
}

export function createEmailTransport(options: EmailTransportOptions) {
  return {
    async send(account: SmtpAccount, to: string[], message: RenderedEmail): Promise<EmailOutcome> {
      const started = performance.now();
      // Loaded with the first email: most processes (every `dragnet` command) send none.
      const { default: nodemailer } = await import('nodemailer');
      const transporter = nodemailer.createTransport({
        host: account.host,
        port: account.port,
        secure: false,
        requireTLS: account.encryption === 'TLS',
        ignoreTLS: account.encryption === 'SSL',
        auth: account.authenticationRequired && account.username ? { user: account.username, pass: account.password ?? '' } : undefined,
        connectionTimeout: options.timeoutMs,
        greetingTimeout: options.timeoutMs,
        socketTimeout: options.timeoutMs,
        tls: { rejectUnauthorized: !options.allowSelfSigned, ...(options.ca ? { ca: options.ca } : {}) },
        logger: false,
        debug: false,
      });
      try {
        await transporter.sendMail({ from: account.from, to, subject: message.subject, html: message.html, text: message.text });
        return { ok: true, error: null, durationMs: Math.round(performance.now() - started) };
      } catch (error) {
        return { ok: false, error: (error as Error).message, durationMs: Math.round(performance.now() - started) };
      } finally {
        transporter.close();
      }
    },
  };
}

export type EmailTransport = ReturnType<typeof createEmailTransport>;
