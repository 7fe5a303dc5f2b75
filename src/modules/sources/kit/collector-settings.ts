import { FormatRegistry, Kind, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';

/**
 * The check of a collector's entry of the collectors file against its `settings` schema
 * (defineCollector): unknown keys first, then defaults applied, then the first value that breaks
 * the schema, named as the operator wrote it (`logs[1]`, `tls.ca`). The reason is the schema's
 * `errorMessage` when it has one (a collector's own wording, such as an example of a good value),
 * otherwise said from the schema itself (`must be an integer from 1 to 600000`), never TypeBox's
 * own "Expected union value".
 */

/** A collector's settings entry is wrong: `setting` names the key (e.g. `logs[1]`). */
export class CollectorSettingsError extends Error {
  constructor(
    readonly setting: string,
    readonly reason: string,
  ) {
    super(`${setting}: ${reason}`);
  }
}

/** `format: 'http-url'`: a URL that parses, with scheme http or https. */
export const HTTP_URL_FORMAT = 'http-url';
FormatRegistry.Set(
  HTTP_URL_FORMAT,
  (value) => URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol),
);

/** `/logs/1/url` as `logs[1].url`. */
function settingName(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name === '' ? part : `${name}.${part}`), '');
}

function integerReason(schema: TSchema): string {
  const { minimum, maximum } = schema as { minimum?: number; maximum?: number };
  if (minimum !== undefined && maximum !== undefined) return `must be an integer from ${minimum} to ${maximum}`;
  if (minimum === 1) return 'must be a positive integer';
  if (minimum !== undefined) return `must be an integer >= ${minimum}`;
  return maximum === undefined ? 'must be an integer' : `must be an integer <= ${maximum}`;
}

/** What a value must be, said from its schema. */
function reasonOf(schema: TSchema): string {
  if (typeof schema.errorMessage === 'string') return schema.errorMessage;
  switch (schema[Kind]) {
    case 'Integer':
      return integerReason(schema);
    case 'Number':
      return 'must be a number';
    case 'Boolean':
      return 'must be true or false';
    case 'String':
      if (schema.format === HTTP_URL_FORMAT) return 'must be an http(s) URL';
      return schema.minLength ? 'must be a non-empty string' : 'must be a string';
    case 'Array':
      return schema.minItems ? `must be a list of at least ${schema.minItems as number}` : 'must be a list';
    case 'Literal':
      return `must be ${JSON.stringify(schema.const)}`;
    case 'Union':
      return `must be ${(schema.anyOf as TSchema[]).map((member) => reasonOf(member).replace(/^must be /, '')).join(' or ')}`;
    case 'Object':
      return 'must be an object';
    default:
      return 'has the wrong type';
  }
}

function reasonOfError(error: ValueError): string {
  if (error.type === ValueErrorType.ObjectRequiredProperty && typeof error.schema.errorMessage !== 'string')
    return 'is required';
  // Only a nested object declared with `additionalProperties: false`: the entry's own keys are checked above.
  if (error.type === ValueErrorType.ObjectAdditionalProperties)
    return `is not a setting (${Object.keys((error.schema as TObject).properties).join(', ')})`;
  return reasonOf(error.schema);
}

/**
 * The entry as the collector's `run` gets it (defaults applied), or a CollectorSettingsError
 * naming the first key that is wrong.
 */
export function checkCollectorSettings<Settings extends TObject>(
  collector: string,
  schema: Settings,
  raw: Record<string, unknown>,
): Static<Settings> {
  const known = Object.keys(schema.properties);
  for (const key of Object.keys(raw)) {
    if (!known.includes(key))
      throw new CollectorSettingsError(key, `is not a setting of ${collector} (${known.join(', ')})`);
  }
  const settings: unknown = Value.Default(schema, Value.Clone(raw));
  if (Value.Check(schema, settings)) return settings;
  // Check refused it, so there is a first error.
  const error = Value.Errors(schema, settings).First()!;
  throw new CollectorSettingsError(settingName(error.path), reasonOfError(error));
}
