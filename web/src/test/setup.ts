import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';
import { scaled } from '../../../test/support/wait.ts';

// Answers come from a real server on a machine shared with other test runs: allow them time.
configure({ asyncUtilTimeout: scaled(10_000) });

afterEach(() => {
  cleanup();
  localStorage.clear();
});
