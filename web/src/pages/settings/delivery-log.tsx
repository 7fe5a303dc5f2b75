import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Table } from '../../ui/table.tsx';
import { useDeliveryAttempts } from './delivery-queries.ts';

/**
 * The latest delivery attempts (emails and webhooks, tests included): why an alert did or did not
 * arrive; only one rule's with `ruleId` (its page).
 */
export function DeliveryLog({ ruleId }: { ruleId?: number }) {
  const attempts = useDeliveryAttempts(ruleId);
  if (attempts.isPending) return <Loading />;
  if (!attempts.data) return <ErrorNotice error={attempts.error} />;
  return (
    <>
      <div className="actions">
        <button type="button" onClick={() => void attempts.refetch()} disabled={attempts.isFetching}>
          {attempts.isFetching ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      {attempts.data.results.length === 0 ? (
        <p className="muted">Nothing sent yet.</p>
      ) : (
        <Table
          headings={['When', 'What', 'To', 'Outcome']}
          label={ruleId === undefined ? 'Recent deliveries' : "The rule's deliveries"}
        >
          {attempts.data.results.map((attempt) => (
            <tr key={attempt.id}>
              <td>{formatDateTime(attempt.created_at)}</td>
              <td>
                {attempt.channel} · {attempt.purpose.replace('_', ' ')}
              </td>
              <td className="wrap">{attempt.target}</td>
              <td>
                <span className={attempt.status === 'success' ? 'ok' : 'error'}>
                  {attempt.status === 'success' ? 'sent' : 'failed'}
                </span>
                {attempt.status_code !== null && ` (${attempt.status_code})`}
                {attempt.error && <div className="muted wrap">{attempt.error}</div>}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}
