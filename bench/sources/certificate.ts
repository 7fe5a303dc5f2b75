import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/**
 * Synthetic certstream frames for `npm run bench -- sources`: files of at most 500,000 frames
 * (one JSON frame a line, the shape of certstream's certificate_update, issuer chain included),
 * one in five a precertificate, one in fifty the same certificate again from a second log (a
 * duplicate), and a heartbeat every 1,000 frames (skipped, not counted).
 */
const FRAMES_PER_FILE = 500_000;
const LOGS = [
  { name: "Google 'Argon2026h1' log", url: 'ct.googleapis.com/logs/us1/argon2026h1/' },
  { name: "Cloudflare 'Nimbus2026' Log", url: 'ct.cloudflare.com/logs/nimbus2026/' },
];
const ISSUERS = [
  { C: 'US', CN: 'R11', O: "Let's Encrypt" },
  { C: 'US', CN: 'WE1', O: 'Google Trust Services' },
  { C: 'AT', CN: 'ZeroSSL ECC Domain Secure Site CA', O: 'ZeroSSL' },
  { C: 'GB', CN: 'Sectigo RSA Domain Validation Secure Server CA', O: 'Sectigo Limited' },
];
const WORDS = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'northwind',
  'contoso',
  'fabrikam',
  'tailspin',
  'wingtip',
  'litware',
];
const START = 1_773_000_000;

const colonHex = (hex: string) => hex.toUpperCase().match(/../g)!.join(':');

/** Certificate `c` (frames repeat one now and then as a duplicate from the other log). */
function frame(c: number, logIndex: number): string {
  const sha1 = createHash('sha1').update(`bench-certificate-${c}`).digest('hex');
  const host = `${WORDS[c % WORDS.length]}-${(c >> 3).toString(36)}.${c % 4 === 0 ? 'net' : 'com'}`;
  const names = c % 3 === 0 ? [host, `www.${host}`, `mail.${host}`] : [host, `www.${host}`];
  const issuer = ISSUERS[c % ISSUERS.length]!;
  const log = LOGS[logIndex]!;
  const index = 100_000_000 + c;
  return JSON.stringify({
    message_type: 'certificate_update',
    data: {
      update_type: c % 5 === 0 ? 'PrecertLogEntry' : 'X509LogEntry',
      leaf_cert: {
        subject: { C: null, CN: host, L: null, O: null, OU: null, ST: null, aggregated: `/CN=${host}` },
        extensions: { subjectAltName: names.map((name) => `DNS:${name}`).join(', '), basicConstraints: 'CA:FALSE' },
        not_before: START + c,
        not_after: START + c + 90 * 86_400,
        serial_number: sha1.slice(0, 36).toUpperCase(),
        fingerprint: colonHex(sha1),
        all_domains: names,
      },
      chain: [
        {
          subject: { ...issuer, aggregated: `/C=${issuer.C}/CN=${issuer.CN}/O=${issuer.O}` },
          extensions: { basicConstraints: 'CA:TRUE' },
          fingerprint: colonHex(sha1.slice(0, 40)),
        },
      ],
      cert_index: index,
      cert_link: `https://${log.url}ct/v1/get-entries?start=${index}&end=${index}`,
      seen: START + c + 0.5,
      source: log,
    },
  });
}

export const benchSource = {
  source: 'certificate',
  ingester: 'certificate',
  format: 'certstream',
  unit: 'certificates',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    let written = 0;
    let certificate = 0;
    for (let n = 0; written < count; n++) {
      const file = path.join(dir, `certstream-${String(n + 1).padStart(4, '0')}.jsonl`);
      const out = createWriteStream(file);
      for (let inFile = 0; inFile < FRAMES_PER_FILE && written < count; inFile++) {
        let line: string;
        if (inFile % 1000 === 999) line = `{"message_type":"heartbeat","timestamp":${START + inFile}.0}`;
        // Every 50th frame is the previous certificate again, from the other log.
        else if (written % 50 === 49) line = frame(certificate - 1, 1);
        else line = frame(certificate++, 0);
        if (inFile % 1000 !== 999) written++;
        if (!out.write(`${line}\n`)) await once(out, 'drain');
      }
      out.end();
      await once(out, 'finish');
      files.push(file);
    }
    return files;
  },
};
