import { useId } from 'react';
import { setTimeZoneChoice, useTimeZoneChoice, type TimeZoneChoice } from './time-zone.ts';

const localZone = new Intl.DateTimeFormat().resolvedOptions().timeZone;

/** The header's choice of zone for every time the dashboard shows (kept in this browser). */
export function TimeZoneSwitch() {
  const id = useId();
  const choice = useTimeZoneChoice();
  return (
    <span className="check">
      <label htmlFor={id}>Times in</label>
      <select id={id} value={choice} onChange={(event) => setTimeZoneChoice(event.target.value as TimeZoneChoice)}>
        <option value="local">local time ({localZone})</option>
        <option value="utc">UTC</option>
      </select>
    </span>
  );
}
