import { Type, type Static } from '@sinclair/typebox';
import { defineJob } from '../../../jobs/define-job.ts';

const AsyncRunPayload = Type.Object({ runId: Type.Integer(), matchId: Type.Integer() });
export type AsyncRun = Static<typeof AsyncRunPayload>;

/**
 * The matching of an async source's run: the tick claimed the window and recorded a pending
 * match, and this job fills that match (rule-runner.ts, completeAsyncRun).
 */
export const completeAsyncRunJob = defineJob({
  id: 'rules.complete-async-run',
  payload: AsyncRunPayload,
  handler: (run, { runner }: { runner: { completeAsyncRun(run: AsyncRun): Promise<void> } }) =>
    runner.completeAsyncRun(run),
});
