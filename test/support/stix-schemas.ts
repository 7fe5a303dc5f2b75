import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * STIX 2.1 checks for the tests (docs/stix.md): the OASIS STIX 2.1 JSON schemas when they are
 * vendored at /work/shared/stix2.1-json-schemas (draft 2020-12, so Ajv2020; files refer to each
 * other by relative $ref against their $id, so all are loaded first), and checks written from the
 * specification that hold either way (required properties, id form, timestamps, references).
 */
const SCHEMA_ROOT = process.env.DRAGNET_STIX_SCHEMAS ?? '/work/shared/stix2.1-json-schemas/schemas';

export const stixSchemasPresent = existsSync(SCHEMA_ROOT);

type Json = Record<string, unknown>;

let validators: Map<string, ValidateFunction> | undefined;

function loadSchemas() {
  if (validators) return;
  const ajv = new Ajv2020({ strict: false, allErrors: true, unicodeRegExp: false });
  addFormats.default(ajv);
  // ajv-formats has no idn-hostname; domain-name values are checked by the specification's rules.
  ajv.addFormat('idn-hostname', true);
  const byType = new Map<string, string>();
  for (const folder of readdirSync(SCHEMA_ROOT)) {
    for (const file of readdirSync(path.join(SCHEMA_ROOT, folder))) {
      if (!file.endsWith('.json')) continue;
      const schema = JSON.parse(readFileSync(path.join(SCHEMA_ROOT, folder, file), 'utf8')) as Json;
      ajv.addSchema(schema);
      if (folder !== 'common' || file === 'marking-definition.json')
        byType.set(file.replace(/\.json$/, ''), schema.$id as string);
    }
  }
  validators = new Map([...byType].map(([type, id]) => [type, ajv.getSchema(id)!]));
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
const ID = new RegExp(`^([a-z][a-z0-9-]+[a-z0-9])--${UUID}$`);
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const SCO_TYPES = new Set([
  'artifact',
  'autonomous-system',
  'directory',
  'domain-name',
  'email-addr',
  'email-message',
  'file',
  'ipv4-addr',
  'ipv6-addr',
  'mac-addr',
  'mutex',
  'network-traffic',
  'process',
  'software',
  'url',
  'user-account',
  'windows-registry-key',
  'x509-certificate',
]);

/** STIX 2.1 required properties beyond the common ones, per type (the specification's tables). */
const REQUIRED: Record<string, string[]> = {
  indicator: ['pattern', 'pattern_type', 'valid_from'],
  'observed-data': ['first_observed', 'last_observed', 'number_observed', 'object_refs'],
  sighting: ['sighting_of_ref'],
  note: ['content', 'object_refs'],
  identity: ['name'],
  'domain-name': ['value'],
  url: ['value'],
  'email-addr': ['value'],
  'ipv4-addr': ['value'],
  'ipv6-addr': ['value'],
  software: ['name'],
};

/** What the specification says of one object, without the schemas. */
function specProblems(object: Json): string[] {
  const problems: string[] = [];
  const type = object.type as string;
  const id = String(object.id);
  if (!ID.test(id) || !id.startsWith(`${type}--`)) problems.push(`id ${id} is not ${type}--<uuid>`);
  const sco = SCO_TYPES.has(type);
  const common = sco
    ? ['type', 'id']
    : type === 'marking-definition'
      ? ['type', 'spec_version', 'id', 'created']
      : ['type', 'spec_version', 'id', 'created', 'modified'];
  for (const name of [...common, ...(REQUIRED[type] ?? [])])
    if (object[name] === undefined || object[name] === null) problems.push(`${type} lacks ${name}`);
  if (object.spec_version !== undefined && object.spec_version !== '2.1') problems.push('spec_version is not 2.1');
  for (const name of [
    'created',
    'modified',
    'valid_from',
    'first_observed',
    'last_observed',
    'first_seen',
    'last_seen',
  ])
    if (object[name] !== undefined && !TIMESTAMP.test(String(object[name])))
      problems.push(`${name} is not a UTC timestamp`);
  if (object.created && object.modified && String(object.modified) < String(object.created))
    problems.push('modified is before created');
  if (object.first_observed && String(object.last_observed) < String(object.first_observed))
    problems.push('last_observed is before first_observed');
  for (const [name, value] of Object.entries(object)) {
    if (name !== 'id' && !/^[a-z0-9_]{3,250}$/.test(name)) problems.push(`property name ${name}`);
    if (name.endsWith('_ref') && !ID.test(String(value))) problems.push(`${name} is not an id`);
    if (
      name.endsWith('_refs') &&
      (!Array.isArray(value) || value.length === 0 || value.some((ref) => !ID.test(String(ref))))
    )
      problems.push(`${name} is not a list of ids`);
  }
  return problems;
}

const refsOf = (object: Json): string[] =>
  Object.entries(object).flatMap(([name, value]) =>
    name.endsWith('_ref') ? [String(value)] : name.endsWith('_refs') ? (value as string[]) : [],
  );

/**
 * Every problem of a bundle: the OASIS schema of each object's type (when the schemas are
 * present; the bundle schema's anyOf over every type is left out: it only repeats those checks,
 * slowly), the specification's checks, objects twice, and references to objects not in the bundle.
 */
export function stixBundleProblems(bundle: Json): string[] {
  const problems: string[] = [];
  if (bundle.type !== 'bundle' || !ID.test(String(bundle.id))) problems.push('not a bundle with a bundle id');
  const objects = (bundle.objects ?? []) as Json[];
  const ids = new Set(objects.map((object) => String(object.id)));
  if (ids.size !== objects.length) problems.push('an object is in the bundle twice');
  if (stixSchemasPresent) loadSchemas();
  for (const object of objects) {
    const where = `${String(object.id)}:`;
    for (const problem of specProblems(object)) problems.push(`${where} ${problem}`);
    for (const ref of refsOf(object)) if (!ids.has(ref)) problems.push(`${where} refers to ${ref}, not in the bundle`);
    const validate = stixSchemasPresent ? validators!.get(String(object.type)) : undefined;
    if (validate && !validate(object))
      problems.push(`${where} schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
  }
  return problems;
}
