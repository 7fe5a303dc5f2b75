import { demoPostedAt, demoRandom, writeDemoDocuments } from '../common/documents/demo-documents.ts';
import type { SourceContext } from '../kit/source.ts';
import { genericPasteDocument } from './paste-record.ts';

/**
 * Synthetic pastes in the generic paste JSON Lines record: the demo data of `dragnet demo` and
 * the benchmark input of `npm run bench -- sources`. Every account, address and password is
 * made up (example domains, random strings).
 */
export interface GenericPaste {
  site: string;
  key: string;
  title: string;
  syntax: string;
  user: string;
  date: string;
  size?: number;
  expire: number | string;
  url: string;
  content: string;
}

const SITES = [
  { site: 'pastebin', url: (key: string) => `https://pastebin.com/${key}` },
  { site: 'paste_ee', url: (key: string) => `https://paste.ee/p/${key}` },
  { site: 'rentry', url: (key: string) => `https://rentry.co/${key}` },
] as const;
const DOMAINS = ['acme-bank.com', 'globex.com', 'initech.io', 'contoso.com', 'northwind.co'];
const USERS = ['', '', 'anon1337', 'd4rkpaste', 'combo_supplier'];
const KEY_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** `count` pastes; paste i posted at `postedAt(i)`. */
export function randomPastes(
  seed: number,
  count: number,
  postedAt: (i: number, random: () => number) => number,
): GenericPaste[] {
  const { random, pick, int } = demoRandom(seed);
  const word = (length: number) => Array.from({ length }, () => KEY_CHARS[int(KEY_CHARS.length)]).join('');
  const bodies: ((domain: string) => { title: string; syntax: string; content: string })[] = [
    (domain) => ({
      title: `${domain} combo`,
      syntax: 'text',
      content: Array.from({ length: 5 + int(20) }, () => `${word(7).toLowerCase()}@${domain}:${word(10)}`).join('\n'),
    }),
    (domain) => ({
      title: 'users dump',
      syntax: 'sql',
      content: `INSERT INTO users (email, password_hash) VALUES\n${Array.from({ length: 3 + int(8) }, () => `('${word(6).toLowerCase()}@${domain}', '$2y$10$${word(53)}')`).join(',\n')};`,
    }),
    () => ({
      title: 'config',
      syntax: 'json',
      content: JSON.stringify({ debug: false, workers: 1 + int(8), region: pick(['eu-west-1', 'us-east-1']) }, null, 2),
    }),
    () => ({
      title: 'Untitled',
      syntax: 'python',
      content: `import requests\n\nfor page in range(${int(50)}):\n    print(requests.get(f"https://example.com/?p={page}").status_code)`,
    }),
  ];
  return Array.from({ length: count }, (_, i) => {
    const site = pick(SITES);
    const key = word(8);
    const body = pick(bodies)(pick(DOMAINS));
    const date = postedAt(i, random);
    return {
      site: site.site,
      key,
      ...body,
      user: pick(USERS),
      date: new Date(date).toISOString(),
      expire: random() < 0.7 ? 0 : Math.floor(date / 1000) + 30 * 86_400,
      url: site.url(key),
    };
  });
}

const DEMO_DAYS = 30;

/** The catalog's example (acme-bank.com AND password on pastebin, text or sql) finds these. */
function plantedPastes(now: number): { day: number; paste: GenericPaste }[] {
  const posted = (day: number) => new Date(demoPostedAt(now, day, () => 0.4)).toISOString();
  return [
    {
      day: 2,
      paste: {
        site: 'pastebin',
        key: 'Xq7mTz2K',
        title: 'acme-bank.com employees',
        syntax: 'text',
        user: '',
        date: posted(2),
        expire: 0,
        url: 'https://pastebin.com/Xq7mTz2K',
        content:
          'Acme Bank staff portal (portal.acme-bank.com)\nj.doe@acme-bank.com password: Spring2026!\nm.roe@acme-bank.com password: Welcome123\n',
      },
    },
    {
      day: 6,
      paste: {
        site: 'pastebin',
        key: 'hR4vWc9N',
        title: 'db backup',
        syntax: 'sql',
        user: 'd4rkpaste',
        date: posted(6),
        expire: 0,
        url: 'https://pastebin.com/hR4vWc9N',
        content:
          "-- host: db01.acme-bank.com\nCREATE TABLE users (email varchar(255), password varchar(255));\nINSERT INTO users VALUES ('it-admin@acme-bank.com', 'password=Adm1n!2026');\n",
      },
    },
  ];
}

export async function loadDemoPastes(context: SourceContext, now: number): Promise<number> {
  const random = randomPastes(12, 150, (i, r) => demoPostedAt(now, i % DEMO_DAYS, r)).map((paste, i) => ({
    day: i % DEMO_DAYS,
    paste,
  }));
  const dated = [...random, ...plantedPastes(now)];
  return writeDemoDocuments(
    context,
    'paste_site',
    now,
    dated.map(({ day, paste }) => ({ day, document: genericPasteDocument(paste) })),
  );
}
