/**
 * Text that may quote a peer (an error carrying a server's answer, a tenant's target) as the
 * store can keep it: PostgreSQL refuses NUL in text, and control characters have no business in
 * a log line an operator reads. Cut to `maxLength`.
 */
export const storableText = (text: string, maxLength: number) =>
  // eslint-disable-next-line no-control-regex -- control characters are what it replaces
  text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd').slice(0, maxLength);
