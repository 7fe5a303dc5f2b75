import { describe, expect, it } from 'vitest';
import { hashTypeOf, maskPassword, normalizeCredential } from '../credential.ts';
import { parseLeakTarget } from '../leak-target.ts';
import { parseComboLine } from './combolist.ts';
import { createPasswordBlockReader, holdsPasswordBlock } from './stealer-log.ts';
import { holdsComboLine } from './combolist.ts';

describe('combolist lines', () => {
  it.each([
    ['j.doe@acme-bank.com:Secret1', { url: null, login: 'j.doe@acme-bank.com', password: 'Secret1' }],
    ['jdoe:pass:with:colons', { url: null, login: 'jdoe', password: 'pass:with:colons' }],
    ['jdoe;semi', { url: null, login: 'jdoe', password: 'semi' }],
    [
      'https://vpn.acme-bank.com:8443/login:j.doe@acme-bank.com:Secret1',
      { url: 'https://vpn.acme-bank.com:8443/login', login: 'j.doe@acme-bank.com', password: 'Secret1' },
    ],
    ['android://hash@com.acme.app/:alice:pw', { url: 'android://hash@com.acme.app/', login: 'alice', password: 'pw' }],
    ['acme-bank.com/login:alice:pw', { url: 'acme-bank.com/login', login: 'alice', password: 'pw' }],
    [
      'https://acme-bank.com/login | bob@acme-bank.com | p|w',
      { url: 'https://acme-bank.com/login', login: 'bob@acme-bank.com', password: 'p|w' },
    ],
    ['  spaced@acme.com:pw  ', { url: null, login: 'spaced@acme.com', password: 'pw' }],
  ])('%s', (line, expected) => {
    expect(parseComboLine(line)).toEqual(expected);
  });

  it('skips blank lines and explains bad ones', () => {
    expect(parseComboLine('   ')).toBeNull();
    expect(parseComboLine('no separator here')).toBe('no login:password separator');
    expect(parseComboLine(':password')).toBe('empty login');
    expect(parseComboLine('login:')).toBe('empty password');
    expect(parseComboLine('https://acme.com/login:onlyone')).toBe('a URL line needs url:login:password');
    expect(parseComboLine(`a:${'x'.repeat(3000)}`)).toMatch(/longer than/);
  });
});

describe('stealer-log password blocks', () => {
  const read = (text: string) => {
    const reader = createPasswordBlockReader({ country: 'US', os: 'Windows 10', infectedAt: 1 });
    const lines = text.split('\n');
    return [...lines.flatMap((line, i) => reader.push(line, i + 1)), ...reader.end()];
  };

  it('reads RedLine, Raccoon and Vidar layouts, banners and separators', () => {
    const blocks = read(
      [
        '*****************************************',
        '*   Telegram: @seller_channel  fresh    *',
        '*****************************************',
        'URL: https://vpn.acme-bank.com/login',
        'Username: j.doe@acme-bank.com',
        'Password: Secret 1 ',
        'Application: Google_[Chrome]_Default',
        '===============',
        'URL: https://mail.acme-bank.com/owa',
        'USER: j.doe',
        'PASS: pw2',
        '',
        'Soft: Chrome Default (91.0)',
        'Host: https://portal.acme-bank.com/',
        'Login: admin',
        'Password: pw3',
      ].join('\n'),
    );
    expect(blocks.map((b) => b.record && [b.record.url, b.record.login, b.record.password, b.record.software])).toEqual(
      [
        ['https://vpn.acme-bank.com/login', 'j.doe@acme-bank.com', 'Secret 1 ', 'Google_[Chrome]_Default'],
        ['https://mail.acme-bank.com/owa', 'j.doe', 'pw2', null],
        ['https://portal.acme-bank.com/', 'admin', 'pw3', 'Chrome Default (91.0)'],
      ],
    );
    expect(blocks[0]!.record!.machine).toEqual({ country: 'US', os: 'Windows 10', infectedAt: 1 });
  });

  it('splits entries that follow each other without a blank line, and reports incomplete ones', () => {
    const blocks = read(
      ['URL: a.com', 'Login: x', 'Password: 1', 'URL: b.com', 'Login: y', '', 'URL: c.com', 'Password: 3'].join('\n'),
    );
    expect(blocks).toEqual([
      { line: 1, record: { url: 'a.com', login: 'x', password: '1', software: null, machine: expect.any(Object) } },
      { line: 4, reason: 'block without a password' },
      { line: 7, reason: 'block without a login' },
    ]);
  });
});

describe('format detection', () => {
  it('tells a passwords file from a combolist, and neither from JSON', () => {
    const passwords = 'URL: https://a.example.com/\nUsername: x@example.com\nPassword: p\n';
    expect(holdsPasswordBlock(passwords)).toBe(true);
    expect(holdsPasswordBlock('x@example.com:secret\n')).toBe(false);
    expect(holdsComboLine('x@example.com:secret\n')).toBe(true);
    expect(holdsComboLine('{"login":"x@example.com","password":"p"}\n')).toBe(false);
    expect(holdsComboLine('no credentials here\n')).toBe(false);
  });
});

describe('normalisation', () => {
  it('takes host and registrable domain from the public suffix list', () => {
    expect(
      normalizeCredential({
        url: 'https://vpn.acme-bank.co.uk:8443/admin/',
        login: 'Bob@Mail.Acme-Bank.co.uk',
        password: 'x',
      }),
    ).toEqual({
      login: 'Bob@Mail.Acme-Bank.co.uk',
      email: 'bob@mail.acme-bank.co.uk',
      loginHost: 'mail.acme-bank.co.uk',
      loginDomain: 'acme-bank.co.uk',
      url: 'https://vpn.acme-bank.co.uk:8443/admin/',
      host: 'vpn.acme-bank.co.uk',
      domain: 'acme-bank.co.uk',
      appId: null,
      urlKind: 'admin',
    });
    expect(normalizeCredential({ url: null, login: 'plainuser', password: 'x' })).toMatchObject({
      email: null,
      loginDomain: null,
      domain: null,
      urlKind: null,
    });
    expect(
      normalizeCredential({ url: 'https://shop.acme.com/account/signin', login: 'a', password: 'x' }).urlKind,
    ).toBe('login');
  });

  it('gives an Android app login its package, not a domain', () => {
    expect(
      normalizeCredential({ url: 'android://Zm9v/+YmFy==@com.acme.app/', login: 'a@acme.com', password: 'x' }),
    ).toMatchObject({ host: null, domain: null, appId: 'com.acme.app' });
    expect(normalizeCredential({ url: 'android://garbled', login: 'a', password: 'x' })).toMatchObject({
      host: null,
      domain: null,
      appId: null,
    });
    expect(normalizeCredential({ url: 'https://acme.com/', login: 'a', password: 'x' }).appId).toBeNull();
  });

  it('masks passwords without giving their length', () => {
    expect(maskPassword('Secret123')).toBe('S****3');
    expect(maskPassword('abc')).toBe('****');
  });

  it('recognises hashes', () => {
    expect(hashTypeOf('5f4dcc3b5aa765d61d8327deb882cf99')).toBe('md5');
    expect(hashTypeOf('$2y$10$abcdefghijklmnopqrstuuJ6yX0qmXmC3Yh3o3R6iG5zqQ0bU9r6e')).toBe('bcrypt');
    expect(hashTypeOf('password1')).toBeNull();
  });

  it('reads a rule target: domain, subdomain, path', () => {
    expect(parseLeakTarget('acme-bank.com')).toEqual({ domain: 'acme-bank.com', host: null, path: null });
    expect(parseLeakTarget('https://VPN.acme-bank.com/Login')).toEqual({
      domain: 'acme-bank.com',
      host: 'vpn.acme-bank.com',
      path: '/login',
    });
    expect(parseLeakTarget('not a domain')).toBeNull();
    expect(parseLeakTarget('localhost')).toBeNull();
  });
});
