import { screen } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { vi } from 'vitest';

/**
 * Clicks a download button and returns the file the page handed to saveFile: the anchor's
 * download name and the Blob's text. `within` narrows where the button is looked for.
 */
export async function downloadedBy(
  button: string,
  within: Pick<typeof screen, 'getByRole'> = screen,
): Promise<{ name: string; text: string }> {
  const saved = vi.spyOn(URL, 'createObjectURL');
  const clicked = new Promise<HTMLAnchorElement>((resolve) => {
    const onClick = (event: Event) => {
      if (!(event.target instanceof HTMLAnchorElement) || !event.target.download) return;
      document.removeEventListener('click', onClick, true);
      resolve(event.target);
    };
    document.addEventListener('click', onClick, true);
  });
  await userEvent.setup().click(within.getByRole('button', { name: button }));
  const anchor = await clicked;
  const text = await (saved.mock.calls[0]![0] as Blob).text();
  saved.mockRestore();
  return { name: anchor.download, text };
}
