import { Type, type SchemaOptions, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** The error body every 4xx/5xx carries (docs/api.md "Errors"). */
export const ErrorBody = Type.Object(
  {
    code: Type.String({ description: 'Stable machine-readable error code' }),
    message: Type.String(),
    fields: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String(), rule: Type.Optional(Type.Integer()) })),
    ),
    request_id: Type.String(),
    retry_after_seconds: Type.Optional(Type.Integer()),
    limit: Type.Optional(Type.Integer()),
    remaining: Type.Optional(Type.Integer()),
    reset_at: Type.Optional(Type.String({ format: 'date-time' })),
    position: Type.Optional(Type.Integer({ minimum: 0, description: 'Query-language errors: offset in the query' })),
    missing_placeholders: Type.Optional(Type.Array(Type.String())),
    required_scope: Type.Optional(
      Type.String({ description: 'insufficient_scope: the API key scope the route needs' }),
    ),
    rules: Type.Optional(
      Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() }), {
        description: 'Rules that use the resource',
      }),
    ),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

const errorDescriptions: Record<number, string> = {
  400: 'Validation failed',
  401: 'Missing, invalid, expired or revoked token',
  403: 'Not allowed',
  404: 'Not found (or another organization)',
  409: 'Conflict',
  413: 'Body too large',
  429: 'Too many requests',
};

/** Response map with the given error statuses, all sharing the error body schema. */
export function withErrors<R extends Record<number, TSchema>>(responses: R, statuses: number[]) {
  const errors = Object.fromEntries(
    statuses.map((status) => [status, Type.Ref(ErrorBody, { description: errorDescriptions[status] ?? 'Error' })]),
  );
  return { ...responses, ...errors } as R;
}

export const OrgIdQuery = Type.Optional(
  Type.Integer({
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'MSSP/system accounts: act for this managed organization',
  }),
);

/** Ids are positive and within what JSON numbers carry exactly. */
export const IdInteger = (options: { description?: string } = {}) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...options });

/** Pages beyond this are refused rather than turned into giant offsets. */
export const MAX_PAGE = 1_000_000;

/**
 * The schema or null. A single-type schema gets a type list (`["string", "null"]`) instead of
 * an anyOf: fast-json-stringify serializes an anyOf by running the validator on each branch,
 * format checks included, for every value of every response, and a type list by a typeof test.
 */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}): TUnsafe<Static<T> | null> {
  if (typeof schema.type === 'string')
    return Type.Unsafe<Static<T> | null>({ ...schema, ...options, type: [schema.type, 'null'] });
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()], options));
}

/** The `{count, next, previous, results}` page of the alert_system_* lists (lib/pagination.ts linkedPage). */
export const LinkedPage = <T extends TSchema>(item: T) =>
  Type.Object({
    count: Type.Integer(),
    next: Nullable(Type.String()),
    previous: Nullable(Type.String()),
    results: Type.Array(item),
  });
