import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { discordExport, randomMessages, type DemoServer } from '../../src/modules/sources/chat_server/demo-chat.ts';

/**
 * Synthetic DiscordChatExporter exports for `npm run bench -- sources`: one channel a file, at
 * most 20,000 messages each (about 20 MB, well under the ingester's 128 MiB cap), indented as
 * the exporter writes them.
 */
const MESSAGES_PER_FILE = 20_000;
const START = Date.parse('2025-01-01T00:00:00Z');
const server: DemoServer = { id: '1120734651482091580', name: 'Bench Market', channels: [] };

export const benchSource = {
  source: 'chat_server',
  ingester: 'chat_server',
  format: 'discord',
  unit: 'messages',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    for (let start = 0; start < count; start += MESSAGES_PER_FILE) {
      const n = files.length;
      const channel = {
        id: String(1_200_000_000_000_000_000n + BigInt(n) * 1_000_000_000n),
        name: `channel-${n + 1}`,
        category: 'Market',
      };
      const messages = randomMessages(
        n + 1,
        Math.min(MESSAGES_PER_FILE, count - start),
        (i) => START + (start + i) * 1000,
      );
      const file = path.join(dir, `channel-${String(n + 1).padStart(4, '0')}.json`);
      await writeFile(file, JSON.stringify(discordExport(server, channel, messages, BigInt(channel.id) + 1n), null, 2));
      files.push(file);
    }
    return files;
  },
};
