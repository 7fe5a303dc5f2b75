import { describe, expect, it } from 'vitest';
import { createNameTable } from './name-table.ts';

describe('phishing name table', () => {
  const valuesOf = (table: ReturnType<typeof createNameTable>, name: string) => {
    const values: number[] = [];
    table.find(name, (value) => values.push(value));
    return values;
  };

  it('keeps every value of a name, in the order added, and finds nothing else', () => {
    const table = createNameTable(4);
    table.add('acme-bnak.com', 1);
    table.add('acmebank.com', 2);
    table.add('acme-bnak.com', 3);
    expect(valuesOf(table, 'acme-bnak.com')).toEqual([1, 3]);
    expect(valuesOf(table, 'acmebank.com')).toEqual([2]);
    expect(valuesOf(table, 'acmebank.co')).toEqual([]);
    expect(valuesOf(table, '')).toEqual([]);
    expect(table.size).toBe(3);
  });

  it('grows past its expected size without losing names (200,000 names from a table sized for 16)', () => {
    const table = createNameTable(16);
    const name = (i: number) => `n${i.toString(36)}-${(i * 7919) % 1000}.example`;
    for (let i = 0; i < 200_000; i++) table.add(name(i), i);
    expect(table.size).toBe(200_000);
    for (const i of [0, 1, 17, 4242, 199_999]) expect(valuesOf(table, name(i))).toEqual([i]);
    let found = 0;
    for (let i = 0; i < 200_000; i += 997) table.find(name(i), (value) => (found += value === i ? 1 : 0));
    expect(found).toBe(Math.ceil(200_000 / 997));
    expect(valuesOf(table, name(200_000))).toEqual([]);
  });
});
