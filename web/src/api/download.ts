/** The file name a Content-Disposition header gives (RFC 6266: filename* first). */
export function filenameFrom(header: string | null): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header);
  if (extended?.[1]) {
    try {
      return decodeURIComponent(extended[1]);
    } catch {
      // A malformed escape: fall back to the plain name.
    }
  }
  return /filename\s*=\s*"([^"]*)"/i.exec(header)?.[1] ?? /filename\s*=\s*([^;\s]+)/i.exec(header)?.[1];
}

/**
 * Hands a downloaded body to the browser as a file. Exports need the bearer token, so they are
 * fetched rather than opened as links.
 */
export function saveFile(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the URL by now; keep it a while for slow browsers.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
