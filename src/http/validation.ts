import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../lib/errors.ts';

/**
 * Bodies are validated strictly: a wrong type is an error, never silently coerced, and unknown
 * fields are rejected (additionalProperties: false in the schemas). Query strings and path
 * parameters arrive as text, so those are coerced to the declared types.
 */
function makeAjv(coerceTypes: boolean | 'array') {
  const ajv = new Ajv.default({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

// Compiling a route's schemas is most of the time an app takes to start (~0.5 s of CPU for the
// validators alone). Routes build their schema objects anew for every app, so the validators are
// kept by the schema's JSON: a process that builds several apps (the test suite builds hundreds)
// compiles each schema once.
const validatorCompilers = new Map<string, FastifySchemaCompiler<unknown>>();

export function createValidatorCompiler(sharedSchemas: object[]): FastifySchemaCompiler<unknown> {
  const key = JSON.stringify(sharedSchemas);
  let compiler = validatorCompilers.get(key);
  if (!compiler) {
    compiler = compileValidators(sharedSchemas);
    validatorCompilers.set(key, compiler);
  }
  return compiler;
}

function compileValidators(sharedSchemas: object[]): FastifySchemaCompiler<unknown> {
  const bodyAjv = makeAjv(false);
  // 'array': a query parameter given once still fills an array-typed parameter (filter=a:b).
  const textAjv = makeAjv('array');
  for (const schema of sharedSchemas) {
    bodyAjv.addSchema(schema);
    textAjv.addSchema(schema);
  }
  const compiled = new Map<string, Validate>();
  return ({ schema, httpPart }) => {
    const key = `${httpPart === 'body' ? 'body' : 'text'} ${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate =
        httpPart === 'body'
          ? bodyAjv.compile(schema as object)
          : decimalIntegers(schema as TextSchema, textAjv.compile(schema as object));
      compiled.set(key, validate);
    }
    return validate;
  };
}

interface TextSchema {
  properties?: Record<string, { type?: string | string[]; items?: { type?: string | string[] } }>;
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const DECIMAL = /^-?[0-9]+$/;
const isInteger = (type: string | string[] | undefined) =>
  type === 'integer' || (Array.isArray(type) && type.includes('integer'));

/**
 * Path and query integers (ids, org_id, pages) must be written in decimal digits. Ajv's coercion
 * alone reads Number(text), which takes " 1", "1e3", "0x1f" and "1.0" as numbers: the same row
 * under many names, and text no client means as an id.
 */
function decimalIntegers(schema: TextSchema, validate: Validate): Validate {
  const integers = Object.entries(schema.properties ?? {})
    .filter(([, property]) => isInteger(property.type) || isInteger(property.items?.type))
    .map(([name]) => name);
  if (integers.length === 0) return validate;
  const check: Validate = (data) => {
    for (const name of integers) {
      const raw = (data as Record<string, unknown> | undefined)?.[name];
      const bad = (Array.isArray(raw) ? raw : [raw]).find(
        (item) => typeof item === 'string' && item !== '' && !DECIMAL.test(item),
      );
      if (bad !== undefined) {
        check.errors = [
          {
            instancePath: `/${name}`,
            schemaPath: '',
            keyword: 'type',
            params: {},
            message: 'must be an integer in decimal digits',
          },
        ];
        return false;
      }
    }
    const valid = validate(data);
    check.errors = validate.errors;
    return valid;
  };
  return check;
}

/** Turns Ajv errors into the `fields` of our error body: one entry per offending field. */
export function fieldErrorsFrom(errors: ErrorObject[], part: string | undefined): FieldError[] {
  const prefix = part === 'querystring' ? 'query' : part;
  const seen = new Map<string, string>();
  for (const error of errors) {
    const pathParts = error.instancePath.split('/').filter(Boolean);
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      pathParts.push(String(error.params.missingProperty));
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      pathParts.push(String(error.params.additionalProperty));
      message = 'is not a known field';
    }
    const field = pathParts.length ? pathParts.join('.') : (prefix ?? 'body');
    if (!seen.has(field)) seen.set(field, message);
  }
  return [...seen].map(([field, message]) => ({ field, message }));
}

/**
 * The path of the first string holding a NUL character, if any. PostgreSQL text cannot store
 * NUL and SQLite's LIKE stops at it, so such input is refused up front for every route.
 */
export function findNulCharacter(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.includes('\0') ? path || 'body' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNulCharacter(value[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (value && typeof value === 'object') {
    // for…in rather than Object.entries: every request passes here, most with an empty query
    // and no params, and entries() would allocate arrays for them.
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const found = findNulCharacter((value as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return null;
}

/** Deepest nesting a request body may have; Dragnet's bodies nest three levels at most. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests deeper than `limit` arrays and objects. Read before parsing, because
 * JSON.parse recurses: 100,000 levels exhaust its stack, which would be a 500, not a 400.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
  return false;
}
