import { jwtVerify } from 'jose';
import type { Clock } from '../../lib/clock.ts';
import { importHmacKey, signHs256 } from '../../lib/crypto.ts';
import { validationError } from '../../lib/errors.ts';

/** What a messenger monitoring rule needs to start from a search (its args). */
export interface FollowUpArgs {
  query: string;
  channel_ids?: number[];
  unique_only?: boolean;
  context_chars?: number;
}

const VALIDITY_SECONDS = 30 * 24 * 3600;
const TOKEN_TYPE = 'messenger_follow_up';

/**
 * A signed, organization-bound token naming a search, so the rule-create endpoint can start a
 * messenger rule from it without trusting the client to repeat the arguments faithfully.
 */
export function createFollowUpTokens(deps: { jwtKey: Uint8Array; clock: Clock }) {
  const key = importHmacKey(deps.jwtKey);
  return {
    issue(orgId: number, historyId: number, args: FollowUpArgs): string {
      const now = Math.floor(deps.clock.now().getTime() / 1000);
      const claims = { token_type: TOKEN_TYPE, org: orgId, history_id: historyId, args };
      return signHs256(deps.jwtKey, { ...claims, iat: now, exp: now + VALIDITY_SECONDS });
    },

    async verify(
      orgId: number,
      token: string,
      field = 'follow_up_token',
    ): Promise<{ historyId: number; args: FollowUpArgs }> {
      try {
        const { payload } = await jwtVerify(token, await key, { algorithms: ['HS256'], currentDate: deps.clock.now() });
        if (payload.token_type !== TOKEN_TYPE || payload.org !== orgId) throw new Error('foreign token');
        return { historyId: Number(payload.history_id), args: payload.args as FollowUpArgs };
      } catch {
        throw validationError(field, 'is not a valid follow-up token of this organization');
      }
    },
  };
}

export type FollowUpTokens = ReturnType<typeof createFollowUpTokens>;
