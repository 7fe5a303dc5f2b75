import { userTarget, type AuditDetails, type AuditEventName, type AuditLog } from '../audit/index.ts';
import type { UserRow } from '../orgs/index.ts';

/** The audit entries about a user's own account: its logins and what it changes on itself. */
export function createAccountAudit(audit: AuditLog) {
  return {
    /** A login or refresh outcome in the user's own organization's audit log. */
    access: (
      user: UserRow,
      clientAddress: string,
      event: 'login.succeeded' | 'login.failed' | 'token.refresh_refused',
      reason?: string,
    ) =>
      audit.record({
        orgId: user.org_id,
        // Whoever failed is not known to be the user; whoever succeeded is.
        actor: event === 'login.succeeded' ? { id: user.id, email: user.email } : null,
        via: 'api',
        ip: clientAddress,
        event,
        target: userTarget(user),
        details: reason ? { reason } : {},
      }),
    /**
     * Something the signed-in user did to their own account, in their own organization's log: an
     * MSSP acting for another organization still changes its own password or 2FA.
     */
    self: (user: UserRow, clientAddress: string, event: AuditEventName, details: AuditDetails = {}) =>
      audit.record({
        orgId: user.org_id,
        actor: { id: user.id, email: user.email },
        via: 'api',
        ip: clientAddress,
        event,
        target: userTarget(user),
        details,
      }),
  };
}

export type AccountAudit = ReturnType<typeof createAccountAudit>;
