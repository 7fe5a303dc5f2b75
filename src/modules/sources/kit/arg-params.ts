import {
  KindGuard,
  Type,
  type SchemaOptions,
  type TLiteral,
  type TObject,
  type TSchema,
  type TUnion,
} from '@sinclair/typebox';

export type ArgType =
  'Int' | 'Float' | 'Boolean' | 'String' | 'Array[Int]' | 'Array[Float]' | 'Array[String]' | 'Array[Boolean]';

/** One param of a catalog row's args_schema (spec 2.9), as paramsOf derives it from a source's `args`. */
export interface ArgParam {
  name: string;
  type: ArgType;
  required: boolean;
  hint?: string;
  example?: unknown;
  /** When set, every value (or every array element) must be one of these. */
  valid_values?: (string | number)[];
}

type ScalarType = 'Int' | 'Float' | 'Boolean' | 'String';

/** A param whose value is one of `values` (the catalog's valid_values), typed as their union. */
export const oneOf = <const Values extends readonly (string | number)[]>(
  values: Values,
  options?: SchemaOptions,
): TUnion<TLiteral<Values[number]>[]> =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );

/**
 * The type of a value or of an array element: Type.Integer is Int, Type.Number Float, and a
 * union of literals (oneOf) the type of its values, which are then the valid_values; an Int's
 * literals are integers.
 */
function scalarOf(schema: TSchema, name: string): { type: ScalarType; validValues?: (string | number)[] } {
  if (KindGuard.IsInteger(schema)) return { type: 'Int' };
  if (KindGuard.IsNumber(schema)) return { type: 'Float' };
  if (KindGuard.IsBoolean(schema)) return { type: 'Boolean' };
  if (KindGuard.IsString(schema)) return { type: 'String' };
  if (KindGuard.IsUnion(schema) && schema.anyOf.every((member) => KindGuard.IsLiteral(member))) {
    const values = schema.anyOf.map((member) => (member as TLiteral).const);
    if (values.every((value) => typeof value === 'string')) return { type: 'String', validValues: values };
    if (values.every((value) => Number.isSafeInteger(value))) return { type: 'Int', validValues: values as number[] };
  }
  throw new Error(
    `args.${name}: a source param is an integer, number, boolean, string, a union of string or integer literals, or an array of one of these`,
  );
}

/**
 * The catalog's args_schema params (spec 2.9) of a source's `args`, in declaration order: name,
 * type, required (not Type.Optional), hint (the `description`), example (`examples[0]`) and
 * valid_values (a union of literals, of the value or of the array's elements).
 */
export function paramsOf(args: TObject): ArgParam[] {
  return Object.entries(args.properties).map(([name, schema]) => {
    const array = KindGuard.IsArray(schema);
    const { type, validValues } = scalarOf(array ? schema.items : schema, name);
    const param: ArgParam = {
      name,
      type: (array ? `Array[${type}]` : type) as ArgType,
      required: args.required?.includes(name) ?? false,
    };
    if (schema.description !== undefined) param.hint = schema.description;
    const examples: unknown = schema.examples;
    if (Array.isArray(examples) && examples.length > 0) param.example = examples[0];
    if (validValues) param.valid_values = validValues;
    return param;
  });
}
