import { useEffect, useRef } from 'react';

/**
 * Draws an email's HTML into a frame that runs nothing of it (sandbox without scripts, forms or
 * popups). The frame inherits the dashboard's content security policy, which refuses inline
 * styles in markup, and emails are styled inline: style attributes and <style> sheets are taken
 * out of the markup before it is parsed, and applied through the CSSOM, which the policy allows. Same origin (allow-same-origin) only so this page can write into the frame.
 */
export function EmailFrame({ html, title }: { html: string; title: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  useEffect(() => {
    const doc = frame.current?.contentDocument;
    const view = frame.current?.contentWindow as (Window & typeof globalThis) | null | undefined;
    if (doc && view) renderEmail(doc, view, html);
  }, [html]);
  return <iframe ref={frame} title={title} sandbox="allow-same-origin" className="email-preview" />;
}

/** Style attributes renamed before parsing, so no parser ever sees one (the policy reports it). */
const STYLE_ATTRIBUTE = /(<[a-z][^<>]*?\s)style(\s*=)/gi;
const STYLE_ELEMENT = /<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi;
const KEPT = 'data-email-style';

export function renderEmail(doc: Document, view: Window & typeof globalThis, html: string): void {
  const sheets: string[] = [];
  const markup = html
    .replace(STYLE_ELEMENT, (_element, css: string) => {
      sheets.push(css);
      return '';
    })
    .replace(STYLE_ATTRIBUTE, `$1${KEPT}$2`);
  const parsed = new DOMParser().parseFromString(markup, 'text/html');
  const root = doc.importNode(parsed.documentElement, true);
  doc.replaceChild(root, doc.documentElement);
  for (const element of [root, ...root.querySelectorAll<HTMLElement>(`[${KEPT}]`)]) {
    const css = element.getAttribute(KEPT);
    if (css === null) continue;
    element.style.cssText = css;
    element.removeAttribute(KEPT);
  }
  if ('adoptedStyleSheets' in doc && typeof view.CSSStyleSheet === 'function') {
    doc.adoptedStyleSheets = sheets.map((text) => {
      const sheet = new view.CSSStyleSheet();
      sheet.replaceSync(text);
      return sheet;
    });
  }
}
