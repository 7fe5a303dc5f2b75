import { describe, expect, it } from 'vitest';
import { luhnCheckDigit, luhnValid, maskedPan, normalizePan, panParts, schemeOf } from './card-number.ts';

describe('Luhn', () => {
  it('accepts the published test numbers and refuses any one-digit change', () => {
    for (const pan of [
      '4111111111111111',
      '5555555555554444',
      '378282246310005',
      '6011111111111117',
      '3530111333300000',
      '4012888888881881',
    ]) {
      expect(luhnValid(pan), pan).toBe(true);
      const changed = pan.slice(0, -1) + String((Number(pan.at(-1)) + 1) % 10);
      expect(luhnValid(changed), changed).toBe(false);
    }
  });

  it('catches a swap of two adjacent digits', () => {
    expect(luhnValid('1411111111111111')).toBe(false);
    expect(luhnValid('5555555555555444')).toBe(false);
  });

  it('completes a number with its check digit', () => {
    expect(luhnCheckDigit('411111111111111')).toBe('1');
    expect(luhnCheckDigit('37828224631000')).toBe('5');
    expect(luhnValid('414720' + '123456789' + luhnCheckDigit('414720123456789'))).toBe(true);
  });
});

describe('normalizePan', () => {
  it('drops spaces and dashes between digit groups', () => {
    expect(normalizePan('4111 1111 1111 1111')).toEqual({ pan: '4111111111111111' });
    expect(normalizePan('4111-1111-1111-1111')).toEqual({ pan: '4111111111111111' });
  });

  it('gives reasons that never quote the number', () => {
    for (const bad of ['4111111111111112', '41111111111', '41111111111111111111', '4111x11111111111', '']) {
      const result = normalizePan(bad);
      expect(result).toHaveProperty('reason');
      if (bad) expect((result as { reason: string }).reason).not.toContain(bad);
    }
    expect(normalizePan('4111111111111112')).toEqual({ reason: 'card number fails the Luhn check' });
    expect(normalizePan('41111111111')).toEqual({ reason: 'card number must be 12 to 19 digits' });
  });
});

describe('schemeOf', () => {
  it.each([
    ['4147201234', 'visa'],
    ['5105601234', 'mastercard'],
    ['2221001234', 'mastercard'],
    ['2720991234', 'mastercard'],
    ['2200123456', 'mir'],
    ['3412345678', 'amex'],
    ['3712345678', 'amex'],
    ['3530111333', 'jcb'],
    ['3012345678', 'diners'],
    ['3612345678', 'diners'],
    ['6011111111', 'discover'],
    ['6451234567', 'discover'],
    ['6212345678', 'unionpay'],
    ['5012345678', 'maestro'],
    ['4242424242', 'visa'],
    // Verve's ranges lie inside Maestro's 50 and Discover's 65: the longer range wins.
    ['5061460000', 'verve'],
    ['5060990000', 'verve'],
    ['5061980000', 'verve'],
    ['5061990000', 'maestro'],
    ['5078650000', 'verve'],
    ['5079640000', 'verve'],
    ['6500020000', 'verve'],
    ['6500270000', 'verve'],
    ['6500280000', 'discover'],
    ['9999999999', null],
    ['1234567890', null],
  ])('%s is %s', (digits, scheme) => {
    expect(schemeOf(digits)).toBe(scheme);
  });
});

describe('what is kept of a PAN', () => {
  it('splits off the BIN, the last four and, of a PAN of 16 digits or more, the 8-digit prefix', () => {
    expect(panParts('4147201234567890')).toEqual({ iin8: '41472012', bin: '414720', last4: '7890', length: 16 });
    expect(panParts('378282246310005')).toEqual({ iin8: null, bin: '378282', last4: '0005', length: 15 });
  });

  it('masks everything between the BIN and the last four', () => {
    expect(maskedPan('414720', '7890', 16)).toBe('414720******7890');
    expect(maskedPan('378282', '0005', 15)).toBe('378282*****0005');
  });
});
