import { describe, expect, it } from 'vitest';
import { parseLogDate, parseSystemInfo } from './system-info.ts';

const NOW = Date.UTC(2026, 0, 1);
const read = (lines: string[]) => parseSystemInfo(lines.join('\r\n'), NOW);

describe('system files of the stealer families', () => {
  it('RedLine/META UserInformation.txt: its misspelled OS key, HWID, a day-first log date', () => {
    expect(
      read([
        'IP: 198.51.100.1',
        'Country: US',
        'Location: New York, New York',
        'HWID: 8F3C2A1B',
        'Operation System: Windows 10 Pro x64',
        'Log date: 30/07/2025 13:42:43',
      ]),
    ).toEqual({
      machine: {
        country: 'US',
        os: 'Windows 10 Pro x64',
        hwid: '8F3C2A1B',
        infectedAt: Date.UTC(2025, 6, 30, 13, 42, 43),
      },
      warnings: [],
    });
  });

  it('Vidar/RisePro information.txt: the ctime Date; Install Date is never the log date', () => {
    const { machine } = read([
      'Version: 41.6',
      'Install Date: 3/4/2021 10:11:12',
      'Date: Tue Jul 29 09:15:02 2025',
      'MachineID: 5f3a',
      'GUID: {7A1F}',
      'HWID: 7A1F-5f3a',
      'Windows: Windows 10 Pro [x64]',
    ]);
    expect(machine).toEqual({
      country: null,
      os: 'Windows 10 Pro [x64]',
      hwid: '7A1F-5f3a',
      infectedAt: Date.UTC(2025, 6, 29, 9, 15, 2),
    });
    expect(read(['Install Date: 14.03.2021 18:20:00', 'OS: Windows 11']).machine.infectedAt).toBeNull();
  });

  it('Vidar family: Local Time is day-first even when both fields could be the month', () => {
    expect(
      read(['MachineID: 1', 'GUID: {2}', 'Work Dir: C:\\x', 'Local Time: 5/6/2025 11:15:2']).machine.infectedAt,
    ).toBe(Date.UTC(2025, 5, 5, 11, 15, 2));
  });

  it('bullet layouts (StealC, Lumma, Raccoon): tabs and dashes before the key', () => {
    const stealc = read([
      'Network Info:',
      '\t- IP: 203.0.113.7',
      '\t- Country: FR',
      '',
      'System Summary:',
      '\t- HWID: C4D9',
      '\t- OS: Windows 11 Pro',
      '\t- Local Time: 2025/7/28 8:5:9',
    ]);
    expect(stealc).toEqual({
      machine: { country: 'FR', os: 'Windows 11 Pro', hwid: 'C4D9', infectedAt: Date.UTC(2025, 6, 28, 8, 5, 9) },
      warnings: [],
    });
    const lumma = read([
      '- LID (Lumma ID): abc',
      '- Hwid: 5E9B',
      '- OS Version: Windows 11 Home (10.0.22631) x64',
      '- Install Date: 14.03.2021 18:20:00',
      '- Local Date: 30.07.2025 06:01:44',
      '- Country: PL',
    ]);
    expect(lumma.machine).toEqual({
      country: 'PL',
      os: 'Windows 11 Home (10.0.22631) x64',
      hwid: '5E9B',
      infectedAt: Date.UTC(2025, 6, 30, 6, 1, 44),
    });
  });

  it('macOS stealers (Atomic/AMOS): sw_vers ProductName + ProductVersion, the Hardware UUID', () => {
    expect(
      read([
        'ProductName:\t\tmacOS',
        'ProductVersion:\t\t14.5',
        'BuildVersion:\t\t23F79',
        '      Hardware UUID: 9C2E-6A3D',
      ]).machine,
    ).toEqual({ country: null, os: 'macOS 14.5', hwid: '9C2E-6A3D', infectedAt: null });
    expect(read(['      System Version: macOS 13.4 (22F66)']).machine.os).toBe('macOS 13.4 (22F66)');
  });

  it('a country name becomes its code; what is neither is null with a warning', () => {
    expect(read(['Country: Germany']).machine.country).toBe('DE');
    expect(read(['- Location: 55.7, 37.6 | Moscow, Russia']).machine.country).toBeNull();
    expect(read(['Location: Georgia']).machine.country).toBeNull();
    expect(read(['Location: US (New York)']).machine.country).toBe('US');
    expect(read(['Country: ', 'Country: Unknown']).warnings).toEqual([]);
    expect(read(['IP: 1', 'Country: Atlantis-7']).warnings).toEqual([
      { line: 2, reason: 'country is not a country code or name' },
    ]);
  });

  it('an ambiguous, impossible, unreadable or future date is null with a warning on its line', () => {
    const ambiguous = read(['Country: CA', 'Log date: 5/6/2025 10:11:12 AM']);
    expect(ambiguous.machine.infectedAt).toBeNull();
    expect(ambiguous.warnings).toEqual([{ line: 2, reason: 'log date is ambiguous (day-first or month-first)' }]);
    expect(read(['Log date: 31/02/2025 10:00:00']).warnings).toEqual([
      { line: 1, reason: 'log date is not a valid date' },
    ]);
    expect(read(['Log date: yesterday']).warnings).toEqual([{ line: 1, reason: 'log date not understood' }]);
    expect(read(['Log date: 2027-06-07 00:00:00']).warnings).toEqual([{ line: 1, reason: 'log date in the future' }]);
    expect(read(['Log date: 1/1/1980 00:00:00']).warnings).toEqual([{ line: 1, reason: 'log date before 1990' }]);
  });
});

describe('log dates', () => {
  it.each([
    ['7/30/2025 1:42:43 PM', Date.UTC(2025, 6, 30, 13, 42, 43)],
    ['30/07/2025 13:42:43', Date.UTC(2025, 6, 30, 13, 42, 43)],
    ['05/05/2025 12:00:00 AM', Date.UTC(2025, 4, 5, 0, 0, 0)],
    ['30.07.2025 13:42', Date.UTC(2025, 6, 30, 13, 42, 0)],
    ['2025.08.04 - 13:17:26 GMT', Date.UTC(2025, 7, 4, 13, 17, 26)],
    ['2024-02-03T04:05:06', Date.UTC(2024, 1, 3, 4, 5, 6)],
    ['Sat Jul 06 3:43:57 2024', Date.UTC(2024, 6, 6, 3, 43, 57)],
    ['Jul 6, 2024 3:43:57 PM', Date.UTC(2024, 6, 6, 15, 43, 57)],
    ['Wed, 30 Jul 2025 13:42:43 GMT', Date.UTC(2025, 6, 30, 13, 42, 43)],
  ])('%s', (text, ms) => {
    expect(parseLogDate(text)).toEqual({ ms });
  });

  it('reads an undecidable order only when the family fixes it', () => {
    expect(parseLogDate('3/4/2025 10:00:00')).toEqual({
      ms: null,
      reason: 'log date is ambiguous (day-first or month-first)',
    });
    expect(parseLogDate('3/4/2025 10:00:00', 'day-first')).toEqual({ ms: Date.UTC(2025, 3, 3, 10, 0, 0) });
    expect(parseLogDate('13:00 PM 1/1/2025')).toEqual({ ms: null, reason: 'log date not understood' });
  });
});
