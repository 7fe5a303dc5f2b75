import { describe, expect, it } from 'vitest';
import { cardRecord } from './card-record.ts';

describe('card records', () => {
  const claimedBrand = (brand: string) => {
    const record = cardRecord({ pan: '4111111111111111', expiry: '12/30', brand });
    if (typeof record === 'string') throw new Error(record);
    return record.record.claimed.brand;
  };

  it('reads brand aliases, and a brand named like an object member as no brand', () => {
    expect(claimedBrand('MC')).toBe('mastercard');
    expect(claimedBrand('Diners Club')).toBe('diners');
    for (const brand of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])
      expect(claimedBrand(brand)).toBeNull();
  });
});
