import { Link } from '@tanstack/react-router';
import { Page } from './page.tsx';

export function NotFoundPage() {
  return (
    <Page title="Page not found">
      <p>
        There is no page at this address. <Link to="/search">Go to search</Link>.
      </p>
    </Page>
  );
}
