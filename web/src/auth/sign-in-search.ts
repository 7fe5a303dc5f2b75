export interface SignInSearch {
  /** Where to go after signing in: a path of this dashboard (never another site). */
  redirect?: string;
}

export function validateSignInSearch(raw: Record<string, unknown>): SignInSearch {
  const target = raw.redirect;
  const local =
    typeof target === 'string' && target.startsWith('/') && !target.startsWith('//') && !target.startsWith('/\\');
  return local && !target.startsWith('/sign-in') ? { redirect: target } : {};
}
