import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// Answers come from a real server on a machine shared with other test runs: allow them time.
configure({ asyncUtilTimeout: 10_000 });

afterEach(() => {
  cleanup();
  localStorage.clear();
});
