/**
 * A moment as the value of an `<input type="datetime-local">`: to the minute, in the reader's
 * time zone, which is how the browser reads it back (`new Date(value)`).
 */
export const datetimeLocalValue = (ms: number) =>
  new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
