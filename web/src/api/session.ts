/**
 * The signed-in session: the token pair and the organization the dashboard acts for (MSSP and
 * system accounts may pick one they manage). Kept in localStorage so a reload, a second tab and
 * a link opened from a notification email stay signed in; a change made in one tab (sign-out, a
 * refreshed token, another organization) reaches the others through the storage event.
 */
export interface SessionState {
  access: string;
  refresh: string;
  /** The organization requests act for (sent as X-Org-Id); null: the account's own. */
  orgId: number | null;
}

export type SignOutReason = 'user' | 'expired';

export interface SessionStore {
  get(): SessionState | null;
  subscribe(listener: () => void): () => void;
  signIn(tokens: { access: string; refresh: string }): void;
  setAccess(access: string): void;
  /** New tokens for the same session (after a password change revoked the old ones). */
  replaceTokens(tokens: { access: string; refresh: string }): void;
  setOrg(orgId: number | null): void;
  signOut(reason: SignOutReason): void;
  /** Why the last sign-out happened, so the sign-in page can say the session expired. */
  lastSignOutReason(): SignOutReason | null;
}

const KEY = 'dragnet.session';

function parse(raw: string | null): SessionState | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<SessionState>;
    if (typeof value.access !== 'string' || typeof value.refresh !== 'string') return null;
    return { access: value.access, refresh: value.refresh, orgId: typeof value.orgId === 'number' ? value.orgId : null };
  } catch {
    return null;
  }
}

export function createSessionStore(storage: Storage = window.localStorage): SessionStore {
  let state = parse(storage.getItem(KEY));
  let signOutReason: SignOutReason | null = null;
  const listeners = new Set<() => void>();
  const emit = () => listeners.forEach((listener) => listener());
  const write = (next: SessionState | null) => {
    state = next;
    if (next) storage.setItem(KEY, JSON.stringify(next));
    else storage.removeItem(KEY);
    emit();
  };

  window.addEventListener('storage', (event) => {
    if (event.key !== KEY && event.key !== null) return;
    const next = parse(storage.getItem(KEY));
    if (!next && state) signOutReason = 'user';
    state = next;
    emit();
  });

  return {
    get: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signIn(tokens) {
      signOutReason = null;
      write({ ...tokens, orgId: null });
    },
    setAccess(access) {
      if (state) write({ ...state, access });
    },
    replaceTokens(tokens) {
      if (state) write({ ...state, ...tokens });
    },
    setOrg(orgId) {
      if (state) write({ ...state, orgId });
    },
    signOut(reason) {
      signOutReason = reason;
      write(null);
    },
    lastSignOutReason: () => signOutReason,
  };
}

/** Seconds since the epoch at which a JWT expires (its `exp` claim), read without verifying it. */
export function tokenExpiry(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const json = atob(payload.replaceAll('-', '+').replaceAll('_', '/'));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp : null;
  } catch {
    return null;
  }
}
