import { Type } from '@sinclair/typebox';
import { IdInteger, MAX_PAGE, Nullable, OrgIdQuery } from '../../http/schemas.ts';

const Scope = Type.Union([Type.Literal('read'), Type.Literal('read_write')], {
  description:
    'read: only requests that change nothing (GET, searches, previews); read_write: everything the user may do except manage keys, 2FA and the password',
});

export const ApiKeyCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: "Unique among the organization's unrevoked keys" }),
    scope: Type.Optional(Scope),
    expires_at: Type.Optional(
      Nullable(Type.String({ format: 'date-time', description: 'In the future; null or absent: never expires' })),
    ),
  },
  { additionalProperties: false },
);

const Timestamp = Type.String({ format: 'date-time' });

export const ApiKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  scope: Type.String({ description: 'read or read_write' }),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart (not a secret)' }),
  status: Type.String({ description: 'active, expired or revoked' }),
  created_at: Timestamp,
  created_by: Nullable(Type.String({ description: "The creator's email" })),
  expires_at: Nullable(Timestamp),
  last_used_at: Nullable(Type.String({ format: 'date-time', description: 'Updated at most once a minute' })),
  revoked_at: Nullable(Timestamp),
  revoked_by: Nullable(Type.String({ description: 'Email of who revoked it' })),
});

export const CreatedApiKey = Type.Composite([
  ApiKey,
  Type.Object({
    key: Type.String({ description: 'The key itself: shown in this response only, never again' }),
  }),
]);

export const ApiKeyListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  org_id: OrgIdQuery,
});

export const ApiKeyIdParams = Type.Object({ id: IdInteger() });
