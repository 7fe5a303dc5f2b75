import { seededRandom } from '../common/seeded-random.ts';
import type { ChannelBatch, MessageInput } from './ingest/corpus-writer.ts';

/**
 * A deterministic, realistic-looking messenger corpus: the demo data of `dragnet demo` and the
 * benchmark corpus of `npm run bench -- search`. Same seed, same corpus, on every machine.
 */

const CATEGORIES = ['Combolists', 'Stealer logs', 'Carding', 'Phishing kits', 'Ransomware chatter', 'Fraud services'];
const CHANNEL_WORDS = [
  'leak',
  'cloud',
  'logs',
  'base',
  'market',
  'shop',
  'drop',
  'vault',
  'hub',
  'zone',
  'crew',
  'dump',
];
const CHANNEL_PREFIXES = ['dark', 'fresh', 'mega', 'black', 'silent', 'ghost', 'cyber', 'red', 'night', 'prime'];
const DOMAINS = [
  'acme-bank.com',
  'acmebank.net',
  'globex.com',
  'initech.io',
  'umbrella-corp.org',
  'contoso.com',
  'northwind.co',
  'fabrikam.ru',
  'sberpay-online.ru',
  'paypal-verify.net',
];
const EN_WORDS = [
  'fresh',
  'logs',
  'combo',
  'private',
  'access',
  'panel',
  'valid',
  'checked',
  'password',
  'mail',
  'accounts',
  'database',
  'dump',
  'cookies',
  'session',
  'stealer',
  'cloud',
  'free',
  'sale',
  'price',
  'update',
  'with',
  'new',
  'full',
  'info',
  'bank',
  'card',
  'balance',
  'vpn',
  'admin',
  'shell',
  'backup',
  'leak',
  'hq',
  'today',
  'users',
  'country',
  'mix',
  'lines',
  'for',
];
const RU_WORDS = [
  'свежие',
  'логи',
  'база',
  'доступ',
  'пароли',
  'аккаунты',
  'продажа',
  'цена',
  'проверено',
  'приватный',
  'слив',
  'карты',
  'банк',
  'выгрузка',
  'обновление',
  'бесплатно',
  'почта',
  'панель',
  'клиенты',
  'данные',
];
const MEDIA = [
  { mediaType: 'document', ext: 'txt' },
  { mediaType: 'document', ext: 'zip' },
  { mediaType: 'photo', ext: null },
] as const;

export interface CorpusOptions {
  seed: number;
  channels: number;
  messages: number;
  /** Messages are spread evenly from `start` over `spanDays`. */
  start: Date;
  spanDays: number;
  /** Exact strings planted in exactly `count` messages each (and nowhere else). */
  needles?: { text: string; count: number }[];
  batchSize?: number;
}

export interface GeneratedChannel {
  username: string;
  title: string;
  category: string;
}

export function corpusChannels(seed: number, count: number): GeneratedChannel[] {
  const random = seededRandom(seed ^ 0x5f3759df);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const prefix = pick(CHANNEL_PREFIXES);
    const word = pick(CHANNEL_WORDS);
    return {
      username: `${prefix}_${word}_${i + 1}`,
      title: `${prefix[0]!.toUpperCase()}${prefix.slice(1)} ${word[0]!.toUpperCase()}${word.slice(1)} ${i + 1}`,
      category: CATEGORIES[i % CATEGORIES.length]!,
    };
  });
}

function messageText(random: () => number, targetLength: number): { text: string; links: string[] } {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const russian = random() < 0.35;
  const parts: string[] = [];
  const links: string[] = [];
  let length = 0;
  while (length < targetLength) {
    const roll = random();
    let part: string;
    if (roll < 0.06) {
      part = `${pick(['support', 'admin', 'billing', 'j.smith', 'info'])}${Math.floor(random() * 100)}@${pick(DOMAINS)}`;
    } else if (roll < 0.1) {
      part = pick(DOMAINS);
    } else if (roll < 0.13) {
      const url = `https://${pick(DOMAINS)}/${pick(['login', 'verify', 'panel', 'files'])}/${Math.floor(random() * 10000)}`;
      links.push(url);
      part = url;
    } else if (roll < 0.15) {
      part = Array.from({ length: 4 }, () => String(Math.floor(random() * 10000)).padStart(4, '0')).join(' ');
    } else {
      part = pick(russian && random() < 0.8 ? RU_WORDS : EN_WORDS);
    }
    parts.push(part);
    length += part.length + 1;
  }
  return { text: parts.join(' '), links };
}

/** Yields the corpus as channel batches, newest channel data last. */
export function* generateCorpus(options: CorpusOptions): Generator<ChannelBatch> {
  const random = seededRandom(options.seed);
  const channels = corpusChannels(options.seed, options.channels);
  const batchSize = options.batchSize ?? 1000;
  const spanMs = options.spanDays * 86_400_000;
  const start = options.start.getTime();

  // Needle placements chosen up front (distinct message indexes per needle), so counts are exact.
  const placements = new Map<number, string[]>();
  for (const needle of options.needles ?? []) {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(needle.count, options.messages)) chosen.add(Math.floor(random() * options.messages));
    for (const index of chosen) placements.set(index, [...(placements.get(index) ?? []), needle.text]);
  }

  const perChannel = Math.ceil(options.messages / options.channels);
  let index = 0;
  for (let c = 0; c < options.channels && index < options.messages; c++) {
    const channel = channels[c]!;
    let batch: MessageInput[] = [];
    for (let m = 0; m < perChannel && index < options.messages; m++, index++) {
      const { text, links } = messageText(random, 240 + Math.floor(random() * 120));
      const planted = placements.get(index);
      const body = planted ? `${text.slice(0, 150)} ${planted.join(' ')} ${text.slice(150)}` : text;
      const media = random() < 0.15 ? MEDIA[Math.floor(random() * MEDIA.length)]! : null;
      batch.push({
        messageId: m + 1,
        userId: random() < 0.2 ? null : 100_000 + Math.floor(random() * 5000),
        text: body,
        // Interleave channels in time so newest-first results mix channels.
        date: start + Math.floor(((m * options.channels + c) / options.messages) * spanMs),
        hasMedia: media !== null,
        mediaType: media?.mediaType ?? null,
        fileName: media?.ext ? `${channel.username}_${m + 1}.${media.ext}` : null,
        links: links.length ? links : null,
      });
      if (batch.length >= batchSize) {
        yield {
          channel: {
            platform: 'telegram',
            username: channel.username,
            title: channel.title,
            category: channel.category,
          },
          messages: batch,
        };
        batch = [];
      }
    }
    if (batch.length) {
      yield {
        channel: { platform: 'telegram', username: channel.username, title: channel.title, category: channel.category },
        messages: batch,
      };
    }
  }
}
