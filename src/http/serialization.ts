import fastJsonStringify, { type Schema } from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';

type Serialize = (data: unknown) => string;

// Fastify's own serializer compiler (fast-json-stringify with the app's shared schemas), with each
// response schema compiled once per process: routes build their schema objects anew for every
// app, and compiling them is the larger half of an app's start (the test suite builds hundreds).
const serializers = new Map<string, Serialize>();

/** `sharedSchemas` are those the app adds with addSchema, each with its `$id`. */
export function createSerializerCompiler(sharedSchemas: { $id?: string }[]): FastifySerializerCompiler<unknown> {
  const shared = Object.fromEntries(sharedSchemas.map((schema) => [schema.$id, schema as Schema]));
  const sharedKey = JSON.stringify(shared);
  return ({ schema }) => {
    const key = `${sharedKey} ${JSON.stringify(schema)}`;
    let serialize = serializers.get(key);
    if (!serialize) {
      serialize = fastJsonStringify(schema as Schema, { schema: shared }) as Serialize;
      serializers.set(key, serialize);
    }
    return serialize;
  };
}
