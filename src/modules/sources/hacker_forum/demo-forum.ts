import { demoPostedAt, demoRandom, writeDemoDocuments } from '../common/documents/demo-documents.ts';
import type { SourceContext } from '../kit/source.ts';
import { forumPostDocument, type ContentType } from './forum-record.ts';

/**
 * Synthetic forum posts in the JSON Lines record format: the demo data of `dragnet demo` and the
 * benchmark input of `npm run bench -- sources`. Forums are named after real ones so that the
 * catalog example reads naturally; every thread, author and post is made up.
 */
const FORUMS = [
  { forum: 'xss', host: 'xss.is', sections: ['Access', 'Databases', 'Malware'] },
  { forum: 'exploit', host: 'exploit.in', sections: ['Marketplace', 'Access', 'Carding'] },
  { forum: 'breachforums', host: 'breachforums.st', sections: ['Databases', 'Leaks', 'Cracking'] },
] as const;
const AUTHORS = [
  'b1ackstar',
  'initaccess',
  'dbseller',
  'r00tshell',
  'phantom_ops',
  'k3rnel',
  'darkmarket_llc',
  'n0name',
];
const COMPANIES = ['Acme Bank', 'Globex Corp', 'Initech', 'Umbrella Corp', 'Contoso Ltd', 'Northwind Traders'];
const THREADS: ((company: string) => string)[] = [
  (company) => `${company} network access, RDP + domain admin`,
  (company) => `${company} customer database 2026, 1.2M rows`,
  (company) => `Selling VPN access: ${company} (US, $2B revenue)`,
  () => 'Looking for a partner for a stealer project',
  () => 'Crypter FUD, weekly subscription',
  (company) => `${company} employee emails + hashes`,
];
const REPLIES = [
  'price?',
  'pm sent',
  'still available? interested',
  'vouch, legit seller',
  'sample please',
  'bump',
  'escrow only',
  'checked, access is valid',
];

export interface ForumPost {
  forum: string;
  section: string;
  thread_id: string;
  thread_title: string;
  post_id: string;
  author: string;
  date: string;
  title?: string;
  body: string;
  url: string;
  content_type: ContentType;
  language?: string;
}

/** A thread's opening post and its replies, post ids counting up from `firstPostId`. */
function thread(options: {
  forum: (typeof FORUMS)[number];
  section: string;
  threadId: number;
  title: string;
  body: string;
  author: string;
  marketplace: boolean;
  replies: { author: string; body: string }[];
  postedAt: (i: number) => number;
  firstPostId: number;
}): ForumPost[] {
  const { forum, threadId, firstPostId } = options;
  const url = (postId: number) => `https://${forum.host}/threads/${threadId}/post-${postId}`;
  const base = {
    forum: forum.forum,
    section: options.section,
    thread_id: String(threadId),
    thread_title: options.title,
  };
  return [
    {
      ...base,
      post_id: String(firstPostId),
      author: options.author,
      date: new Date(options.postedAt(0)).toISOString(),
      title: options.title,
      body: options.body,
      url: url(firstPostId),
      content_type: options.marketplace ? 'marketplace' : 'thread',
      language: 'en',
    },
    ...options.replies.map((reply, i) => ({
      ...base,
      post_id: String(firstPostId + i + 1),
      author: reply.author,
      date: new Date(options.postedAt(i + 1)).toISOString(),
      body: reply.body,
      url: url(firstPostId + i + 1),
      content_type: 'post' as const,
    })),
  ];
}

const REPLY_EVERY_MS = 37 * 60_000;

/** `count` posts in threads of 1 to 4 posts; a thread starts at `threadStart(thread_id)`, its replies follow. */
export function randomForumPosts(
  seed: number,
  count: number,
  threadStart: (threadId: string, random: () => number) => number,
): ForumPost[] {
  const { random, pick, int } = demoRandom(seed);
  const posts: ForumPost[] = [];
  for (let t = 0; posts.length < count; t++) {
    const threadId = 100_000 + seed * 10_000 + t;
    const start = threadStart(String(threadId), random);
    const forum = pick(FORUMS);
    const section = pick(forum.sections);
    const company = pick(COMPANIES);
    const title = pick(THREADS)(company);
    const first = posts.length;
    posts.push(
      ...thread({
        forum,
        section,
        threadId,
        title,
        body: `${title}. Details in PM, escrow accepted. Price ${1 + int(20)}k USD.`,
        author: pick(AUTHORS),
        marketplace: section === 'Marketplace',
        replies: Array.from({ length: int(4) }, () => ({ author: pick(AUTHORS), body: pick(REPLIES) })),
        postedAt: (i) => start + i * REPLY_EVERY_MS,
        firstPostId: 2_000_000 + seed * 100_000 + first,
      }).slice(0, count - first),
    );
  }
  return posts;
}

const DEMO_DAYS = 30;

/** The catalog's example (an "acme bank" access thread on xss, a database offer on exploit) finds these. */
function plantedThreads(now: number): { day: number; posts: ForumPost[] }[] {
  const at = (day: number) => (i: number) => demoPostedAt(now, day, () => 0.1) + i * REPLY_EVERY_MS;
  return [
    {
      day: 4,
      posts: thread({
        forum: FORUMS[0],
        section: 'Access',
        threadId: 91_742,
        title: 'Acme Bank (US) corporate network access',
        body: 'Selling access to ACME BANK internal network: RDP to 3 hosts, domain user, AV is Defender. Revenue $4B. Start 15k, blitz 25k.',
        author: 'initaccess',
        marketplace: false,
        replies: [
          { author: 'k3rnel', body: 'pm sent' },
          { author: 'phantom_ops', body: 'is the acme bank access still valid?' },
        ],
        postedAt: at(4),
        firstPostId: 640_118,
      }),
    },
    {
      day: 1,
      posts: thread({
        forum: FORUMS[1],
        section: 'Marketplace',
        threadId: 238_551,
        title: 'Acme Bank customers database 2026',
        body: '[SELL] acme bank customer database, 410k rows: name, email, phone, account type. Sample on request.',
        author: 'dbseller',
        marketplace: true,
        replies: [],
        postedAt: at(1),
        firstPostId: 1_770_402,
      }),
    },
  ];
}

export async function loadDemoForums(context: SourceContext, now: number): Promise<number> {
  // The threads take the days in turn; replies come the same day.
  const days = new Map<string, number>();
  const random = randomForumPosts(11, 240, (threadId, r) => {
    days.set(threadId, days.size % DEMO_DAYS);
    return demoPostedAt(now, days.get(threadId)!, r);
  });
  const dated = [
    ...random.map((post) => ({ day: days.get(post.thread_id)!, post })),
    ...plantedThreads(now).flatMap(({ day, posts }) => posts.map((post) => ({ day, post }))),
  ];
  return writeDemoDocuments(
    context,
    'hacker_forum',
    now,
    dated.map(({ day, post }) => ({ day, document: forumPostDocument(post) })),
  );
}
