import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomForumPosts } from '../../src/modules/sources/hacker_forum/demo-forum.ts';

/** Synthetic forum posts (threads with replies, marketplace offers) as JSON Lines for `npm run bench -- sources`, 50,000 a file. */
const POSTS_PER_FILE = 50_000;
const START = Date.parse('2025-01-01T00:00:00Z');

export const benchSource = {
  source: 'hacker_forum',
  ingester: 'hacker_forum',
  format: 'jsonl',
  unit: 'posts',
  async writeInput(dir: string, count: number): Promise<string[]> {
    let thread = 0;
    const posts = randomForumPosts(1, count, () => START + thread++ * 600_000);
    const files: string[] = [];
    for (let start = 0; start < count; start += POSTS_PER_FILE) {
      const file = path.join(dir, `posts-${String(files.length + 1).padStart(4, '0')}.jsonl`);
      await writeFile(
        file,
        posts
          .slice(start, start + POSTS_PER_FILE)
          .map((post) => JSON.stringify(post))
          .join('\n') + '\n',
      );
      files.push(file);
    }
    return files;
  },
};
