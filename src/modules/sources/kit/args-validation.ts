import type { ArgParam, ArgType } from './arg-params.ts';
import type { ArgError, SourceDefinition } from './source.ts';

/**
 * Validation of a rule's `args` against its source's args_schema (spec 2.10 rules 1-4).
 * docs/sources.md "Validation of args" states the same rules for users.
 *
 * - `args` must be a JSON object.
 * - `createdAt` is reserved (rule 4) and gets its own message; any other undeclared key is
 *   rejected (rule 1).
 * - A required param must be present (rule 2). `null` counts as absent: for an optional param it
 *   is allowed and means "not given"; for a required one it is "is required".
 * - Each value is type-checked (rule 3): Int = safe integer; Float = finite number (integers
 *   included); Boolean; String; Array[T] = array whose every element is a T. Strings are judged
 *   trimmed: a required String and every String array element must be non-empty, and
 *   valid_values are compared with the trimmed value. A blank optional String is accepted and
 *   means absent. A required Array must have at least one element.
 * - When valid_values is declared, the value (or every array element) must be one of them.
 *
 * Errors name the field as `args.<name>`, or `args.<name>[i]` for one bad array element; all
 * errors are reported, in key order, then param order. Args that pass these checks go through
 * the source's own `prepare` (checks beyond the types), whose errors are reported then.
 */
export const RESERVED_ARG_KEY = 'createdAt';

type ScalarType = 'Int' | 'Float' | 'Boolean' | 'String';

const PLURAL: Record<ScalarType, string> = {
  Int: 'integers',
  Float: 'numbers',
  Boolean: 'booleans',
  String: 'strings',
};

const elementTypeOf = (type: ArgType): ScalarType | null =>
  type.startsWith('Array[') ? (type.slice(6, -1) as ScalarType) : null;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function scalarTypeError(type: ScalarType, value: unknown): string | null {
  switch (type) {
    case 'Int':
      return typeof value === 'number' && Number.isSafeInteger(value) ? null : 'must be an integer';
    case 'Float':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'Boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean';
    case 'String':
      return typeof value === 'string' ? null : 'must be a string';
  }
}

/** The type, emptiness and valid_values checks of one scalar (a value or an array element). */
function scalarError(type: ScalarType, value: unknown, param: ArgParam, mustBeNonEmpty: boolean): string | null {
  const typeError = scalarTypeError(type, value);
  if (typeError) return typeError;
  const compared = typeof value === 'string' ? value.trim() : value;
  if (mustBeNonEmpty && compared === '') return 'must not be empty';
  if (param.valid_values && !param.valid_values.includes(compared as string | number)) {
    return `must be one of: ${param.valid_values.join(', ')}`;
  }
  return null;
}

function paramErrors(param: ArgParam, value: unknown): ArgError[] {
  const field = `args.${param.name}`;
  const elementType = elementTypeOf(param.type);
  if (elementType === null) {
    // A blank optional String means absent (valid_values included); a blank required one is an error.
    if (!param.required && param.type === 'String' && typeof value === 'string' && value.trim() === '') return [];
    const message = scalarError(param.type as ScalarType, value, param, true);
    return message === null ? [] : [{ field, message, rule: 3 }];
  }
  if (!Array.isArray(value)) return [{ field, message: `must be an array of ${PLURAL[elementType]}`, rule: 3 }];
  if (param.required && value.length === 0) return [{ field, message: 'must not be empty', rule: 3 }];
  const errors: ArgError[] = [];
  value.forEach((element: unknown, index) => {
    const message = scalarError(elementType, element, param, true);
    if (message !== null) errors.push({ field: `${field}[${index}]`, message, rule: 3 });
  });
  return errors;
}

export function validateArgs(source: SourceDefinition, args: unknown): ArgError[] {
  if (!isPlainObject(args)) return [{ field: 'args', message: 'must be an object', rule: 3 }];
  const errors: ArgError[] = [];
  const declared = new Map(source.params.map((param) => [param.name, param]));
  for (const key of Object.keys(args)) {
    if (key === RESERVED_ARG_KEY)
      errors.push({ field: `args.${key}`, message: `${RESERVED_ARG_KEY} is reserved`, rule: 4 });
    else if (!declared.has(key))
      errors.push({ field: `args.${key}`, message: `is not a parameter of ${source.alias}`, rule: 1 });
  }
  for (const param of source.params) {
    const value = Object.hasOwn(args, param.name) ? args[param.name] : undefined;
    if (value === undefined || value === null) {
      if (param.required) errors.push({ field: `args.${param.name}`, message: 'is required', rule: 2 });
      continue;
    }
    errors.push(...paramErrors(param, value));
  }
  if (errors.length > 0) return errors;
  const prepared = source.prepare(normalizeArgs(source, args));
  return 'errors' in prepared ? prepared.errors : [];
}

/**
 * The args to store for valid input: only declared keys, strings trimmed (array elements too),
 * and absent values (null, or a blank optional String) left out.
 */
export function normalizeArgs(source: SourceDefinition, args: unknown): Record<string, unknown> {
  const normalized: Record<string, unknown> = {};
  if (!isPlainObject(args)) return normalized;
  for (const param of source.params) {
    if (!Object.hasOwn(args, param.name)) continue;
    const value = args[param.name];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') {
      const trimmed = value.trim();
      if (trimmed === '' && !param.required) continue;
      normalized[param.name] = trimmed;
    } else if (Array.isArray(value)) {
      normalized[param.name] = value.map((element: unknown) =>
        typeof element === 'string' ? element.trim() : element,
      );
    } else {
      normalized[param.name] = value;
    }
  }
  return normalized;
}
