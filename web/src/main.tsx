import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApi } from './api/client.ts';
import { createSessionStore } from './api/session.ts';
import { App } from './app.tsx';
import './ui/styles.css';

const api = createApi({ session: createSessionStore() });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={api} />
  </StrictMode>,
);
