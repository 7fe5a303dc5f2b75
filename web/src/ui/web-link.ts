/** Only http(s) links are clickable: a javascript: or data: URL posted in a channel or a leak stays text. */
export function isWebLink(link: string): boolean {
  try {
    const { protocol } = new URL(link);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
