import type { ApiError } from '../../api/errors.ts';
import type { CatalogParam } from './catalog.ts';

/**
 * The rule form's `args` inputs, generated from a catalog service's args_schema (spec 2.9): each
 * param's type, required flag and valid values choose a control, and the form's values turn back
 * into the typed `args` the server validates (src/modules/sources/kit/args-validation.ts states the
 * same rules; the server stays the judge and its errors show beside the inputs).
 */
export type ScalarType = 'Int' | 'Float' | 'Boolean' | 'String';

export type ArgControl =
  /** A String. */
  | { kind: 'text' }
  /** An Int or a Float. */
  | { kind: 'number'; integer: boolean }
  /** A required Boolean: always sent. */
  | { kind: 'checkbox' }
  /**
   * An optional Boolean: "default", yes or no. An unticked checkbox would send false, which is
   * not the same as leaving a param out whose default is on (certificate include_subdomains).
   */
  | { kind: 'yes-no' }
  /** A scalar with valid values. */
  | { kind: 'select'; options: (string | number)[] }
  /** An array with valid values: one checkbox per value. */
  | { kind: 'choices'; options: (string | number)[] }
  /** An array without valid values: one element per line (numbers may be separated by commas too). */
  | { kind: 'list'; element: ScalarType };

/**
 * What a select or checkbox shows for a valid value. A bare number means nothing to a reader, so
 * when the param's hint (its schema's description) names each value as `<value> <name>: …` (filtered_leak's
 * `filter_id`: "1 employee_emails: …; 2 …") the name goes first; otherwise the value itself.
 */
export function optionLabel(param: Pick<CatalogParam, 'hint'>, option: string | number): string {
  if (typeof option !== 'number') return option;
  const named = new RegExp(`(?:^|;\\s*)${option} (\\w+):`).exec(param.hint ?? '');
  return named ? `${named[1]!.replaceAll('_', ' ')} (${option})` : String(option);
}

/** What the form holds for one param: text, a tick, or the ticked values (as text). */
export type ArgValue = string | boolean | string[];
export type ArgValues = Record<string, ArgValue>;

const SCALARS: readonly string[] = ['Int', 'Float', 'Boolean', 'String'];

function typeOf(param: CatalogParam): { element: ScalarType; array: boolean } {
  const array = /^Array\[(\w+)\]$/.exec(param.type);
  const element = array ? array[1]! : param.type;
  // A type this dashboard does not know yet is edited as text; the server still checks it.
  return { element: (SCALARS.includes(element) ? element : 'String') as ScalarType, array: Boolean(array) };
}

export function controlFor(param: CatalogParam): ArgControl {
  const { element, array } = typeOf(param);
  if (param.valid_values?.length) return { kind: array ? 'choices' : 'select', options: param.valid_values };
  if (array) return { kind: 'list', element };
  if (element === 'Boolean') return param.required ? { kind: 'checkbox' } : { kind: 'yes-no' };
  if (element === 'Int' || element === 'Float') return { kind: 'number', integer: element === 'Int' };
  return { kind: 'text' };
}

/** The form's values for `args` (a rule being edited, a search's options); absent params empty. */
export function valuesFromArgs(params: CatalogParam[], args: Record<string, unknown> = {}): ArgValues {
  return Object.fromEntries(
    params.map((param) => {
      const value = args[param.name];
      const control = controlFor(param);
      switch (control.kind) {
        case 'checkbox':
          return [param.name, value === true];
        case 'yes-no':
          return [param.name, typeof value === 'boolean' ? String(value) : ''];
        case 'choices':
          return [param.name, Array.isArray(value) ? value.map(String) : []];
        case 'list':
          return [param.name, Array.isArray(value) ? value.map(String).join('\n') : ''];
        default:
          return [param.name, value === undefined || value === null ? '' : String(value)];
      }
    }),
  );
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/** A number typed in the form, or the message the server would give for it. */
function parseNumber(text: string, integer: boolean): number | string {
  const value = NUMBER.test(text) ? Number(text) : NaN;
  if (integer) return Number.isSafeInteger(value) ? value : 'must be an integer';
  return Number.isFinite(value) ? value : 'must be a number';
}

/** The list control's text as elements: lines, and for numbers commas and spaces too. */
export function listElements(text: string, element: ScalarType): string[] {
  const separator = element === 'String' ? /\r?\n/ : /[\s,]+/;
  return text
    .split(separator)
    .map((part) => part.trim())
    .filter(Boolean);
}

/** The valid value a ticked or selected text stands for, in its own type (1, not "1"). */
const optionOf = (options: (string | number)[], text: string) => options.find((option) => String(option) === text);

export interface ArgsOutcome {
  args: Record<string, unknown>;
  /** Messages per param name for input that cannot be sent as it is. */
  errors: Record<string, string>;
}

/** The typed `args` the form's values make; empty optional params are left out. */
export function argsFromValues(params: CatalogParam[], values: ArgValues): ArgsOutcome {
  const args: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const param of params) {
    const control = controlFor(param);
    const raw = values[param.name];
    let value: unknown;
    switch (control.kind) {
      case 'checkbox':
        value = raw === true;
        break;
      case 'yes-no':
        value = raw === 'true' ? true : raw === 'false' ? false : undefined;
        break;
      case 'select':
        value = typeof raw === 'string' && raw !== '' ? optionOf(control.options, raw) : undefined;
        break;
      case 'choices': {
        const ticked = (Array.isArray(raw) ? raw : [])
          .map((text) => optionOf(control.options, text))
          .filter((option) => option !== undefined);
        value = ticked.length ? ticked : undefined;
        break;
      }
      case 'list': {
        const elements = listElements(typeof raw === 'string' ? raw : '', control.element);
        if (control.element === 'Int' || control.element === 'Float') {
          const parsed = elements.map((text) => parseNumber(text, control.element === 'Int'));
          const bad = parsed.findIndex((entry) => typeof entry === 'string');
          if (bad !== -1) {
            errors[param.name] = `“${elements[bad]}” ${parsed[bad] as string}`;
            continue;
          }
          value = parsed.length ? parsed : undefined;
        } else if (control.element === 'Boolean') {
          value = elements.length ? elements.map((text) => text.toLowerCase() === 'true') : undefined;
        } else {
          value = elements.length ? elements : undefined;
        }
        break;
      }
      case 'number': {
        const text = typeof raw === 'string' ? raw.trim() : '';
        if (text === '') break;
        const parsed = parseNumber(text, control.integer);
        if (typeof parsed === 'string') {
          errors[param.name] = parsed;
          continue;
        }
        value = parsed;
        break;
      }
      case 'text': {
        const text = typeof raw === 'string' ? raw.trim() : '';
        value = text === '' ? undefined : text;
        break;
      }
    }
    if (value === undefined) {
      if (param.required) errors[param.name] = 'is required';
      continue;
    }
    args[param.name] = value;
  }
  return { args, errors };
}

/** A param's example as the user would type it, for the input's hint. */
export function exampleText(param: CatalogParam): string | undefined {
  const { example } = param;
  if (example === undefined || example === null) return undefined;
  if (Array.isArray(example)) return example.map(String).join(', ');
  if (typeof example === 'boolean') return example ? 'yes' : 'no';
  return String(example);
}

/**
 * The server's messages about one param (`args.<name>`, `args.<name>[i]`): the rule form shows
 * them beside that param's input.
 */
export function serverArgErrors(error: ApiError | undefined, params: CatalogParam[]): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!error) return errors;
  for (const param of params) {
    const prefix = `args.${param.name}`;
    const messages = error.fields
      .filter((entry) => entry.field === prefix || entry.field.startsWith(`${prefix}[`))
      .map((entry) =>
        entry.field === prefix ? entry.message : `${entry.field.slice(prefix.length)} ${entry.message}`,
      );
    if (messages.length) errors[param.name] = messages.join('; ');
  }
  return errors;
}

/** The error fields the rule form shows beside its args inputs (ErrorNotice leaves them out). */
export function argFieldNames(error: ApiError | undefined, params: CatalogParam[]): string[] {
  if (!error) return [];
  const names = new Set(params.map((param) => param.name));
  return error.fields.map((entry) => entry.field).filter((field) => names.has(/^args\.([^[]+)/.exec(field)?.[1] ?? ''));
}
