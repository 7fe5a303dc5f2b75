import { useIncidentCounts } from './incident-work-queries.ts';

/** The navigation's count of new incidents: the link reads "Incidents, 3 new" to a screen reader. */
export function NewIncidentsCount() {
  const counts = useIncidentCounts();
  const count = counts.data?.new;
  if (!count) return null;
  return (
    <span className="nav-count" data-testid="new-incidents">
      <span className="visually-hidden">, </span>
      {count.toLocaleString()}
      <span className="visually-hidden"> new</span>
    </span>
  );
}
