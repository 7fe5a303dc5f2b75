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
  /**
   * When the access token arrived, by this browser's clock: its refresh is timed from here and
   * the token's own lifetime, so a browser clock that is off does not refresh it too early or late.
   */
  receivedAt: number;
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
    return {
      access: value.access,
      refresh: value.refresh,
      orgId: typeof value.orgId === 'number' ? value.orgId : null,
      receivedAt: typeof value.receivedAt === 'number' ? value.receivedAt : 0,
    };
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
      write({ ...tokens, orgId: null, receivedAt: Date.now() });
    },
    setAccess(access) {
      if (state) write({ ...state, access, receivedAt: Date.now() });
    },
    replaceTokens(tokens) {
      if (state) write({ ...state, ...tokens, receivedAt: Date.now() });
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

/** How long a JWT is valid, in seconds (`exp - iat`), read without verifying it. */
export function tokenLifetime(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(atob(payload.replaceAll('-', '+').replaceAll('_', '/'))) as {
      exp?: unknown;
      iat?: unknown;
    };
    return typeof claims.exp === 'number' && typeof claims.iat === 'number' ? claims.exp - claims.iat : null;
  } catch {
    return null;
  }
}
