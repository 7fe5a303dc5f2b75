import type { Static, TSchema } from '@sinclair/typebox';

/**
 * A kind of background job. `id` is what a queued row names (the `type` column of `jobs`), so
 * it must not change once jobs of that kind may be waiting in a store. The payload is checked
 * against its schema when a worker claims the row: a row written by another version of the code
 * or by hand cannot reach the handler in a shape it does not expect. The handler gets what it
 * works with as `context` from the composition root (bindJob), so a job's file needs no service.
 */
export interface JobDefinition<Payload extends TSchema, Context> {
  id: string;
  payload: Payload;
  handler(payload: Static<Payload>, context: Context): Promise<void>;
}

export const defineJob = <Payload extends TSchema, Context>(
  definition: JobDefinition<Payload, Context>,
): JobDefinition<Payload, Context> => definition;

/** A job as the worker runs it: its definition, and the context its handler is called with. */
export interface BoundJob {
  id: string;
  payload: TSchema;
  /** Runs the handler; `payload` has been checked against the schema. */
  run(payload: unknown): Promise<void>;
}

export const bindJob = <Payload extends TSchema, Context>(
  job: JobDefinition<Payload, Context>,
  context: Context,
): BoundJob => ({
  id: job.id,
  payload: job.payload,
  run: (payload) => job.handler(payload as Static<Payload>, context),
});
