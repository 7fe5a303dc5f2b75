import type { ContextPost, ContextWindow, HitContext, SourceContext } from '../kit/source.ts';

/**
 * The messages of a hit's channel around it, by date (ties by message id), through the
 * (channel_id, date) index: "open in context" reads a few rows however large the channel is.
 */
export async function messageContext(
  context: SourceContext,
  { data }: { data: Record<string, unknown> },
  around: ContextWindow,
): Promise<HitContext | null> {
  const channelId = Number(data.channel_id);
  const messageId = Number(data.message_id);
  const date = typeof data.date === 'string' ? Date.parse(data.date) : NaN;
  if (!Number.isSafeInteger(channelId) || !Number.isSafeInteger(messageId) || Number.isNaN(date)) return null;
  const channel = await context.db
    .selectFrom('channels')
    .select(['username', 'title'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!channel) return null;
  const messages = context.db
    .selectFrom('messages')
    .select(['message_id', 'user_id', 'date', 'text'])
    .where('channel_id', '=', channelId);
  const [earlier, hitAndLater] = await Promise.all([
    messages
      .where((eb) => eb.or([eb('date', '<', date), eb.and([eb('date', '=', date), eb('message_id', '<', messageId)])]))
      .orderBy('date', 'desc')
      .orderBy('message_id', 'desc')
      .limit(around.before)
      .execute(),
    messages
      .where((eb) => eb.or([eb('date', '>', date), eb.and([eb('date', '=', date), eb('message_id', '>=', messageId)])]))
      .orderBy('date')
      .orderBy('message_id')
      .limit(around.after + 1)
      .execute(),
  ]);
  const posts: ContextPost[] = [...earlier.reverse(), ...hitAndLater].map((row) => ({
    id: String(row.message_id),
    author: row.user_id === null ? null : `user ${row.user_id}`,
    date: new Date(Number(row.date)).toISOString(),
    text: row.text,
    is_hit: Number(row.message_id) === messageId,
  }));
  return { title: channel.username ? `@${channel.username}` : channel.title, posts };
}
