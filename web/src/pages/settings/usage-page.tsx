import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';

type Usage = Ok<'/service/get_usage_limits/', 'get'>;
type Limit = NonNullable<Usage['total']>[number];

/** Seconds until a window resets, as a reader wants it: "in 3 h 20 min". */
export function resetIn(seconds: number): string {
  if (seconds < 60) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `in ${Math.round(hours / 24)} days`;
}

/** Settings → Usage (spec 2.11): every limit of the organization, how much is used and left. */
export function UsagePage() {
  const { client } = useApi();
  const filterId = useId();
  const [filter, setFilter] = useState('');
  const usage = useQuery({
    queryKey: useScopedKey('usage'),
    queryFn: () => unwrap(client.GET('/service/get_usage_limits/', { params: { query: {} } })),
    refetchInterval: 60_000,
  });
  const text = filter.trim().toLowerCase();
  const services = usage.data?.services.filter((service) => !text || `${service.service_name} ${service.service_slug} ${service.feature}`.toLowerCase().includes(text));
  return (
    <Page title="Usage">
      <p className="muted">Successful requests count against these limits; a refused or failed one does not. Windows reset on UTC calendar boundaries.</p>
      {usage.isPending && <Loading />}
      <ErrorNotice error={usage.error} />
      {usage.data?.total && (
        <section className="card" aria-labelledby="account-wide">
          <h2 id="account-wide">Whole account</h2>
          <LimitBars limits={usage.data.total} label="Whole account" />
        </section>
      )}
      {usage.data && (
        <section aria-labelledby="per-service">
          <h2 id="per-service">Per endpoint</h2>
          <div className="field">
            <label htmlFor={filterId}>Find an endpoint</label>
            <input id={filterId} type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
          </div>
          {services?.length === 0 && <p>No endpoint matches.</p>}
          <div className="usage-grid">
            {services?.map((service) => (
              <section key={service.service_slug} className="card" aria-label={service.service_name}>
                <h3>{service.service_name}</h3>
                <p className="muted">
                  <code>{service.service_slug}</code> · {service.feature}
                </p>
                {service.limits.length ? <LimitBars limits={service.limits} label={service.service_name} /> : <p className="muted">No limit.</p>}
              </section>
            ))}
          </div>
        </section>
      )}
    </Page>
  );
}

/** One bar per window: used of the limit, what remains and when it resets. */
function LimitBars({ limits, label }: { limits: Limit[]; label: string }) {
  return (
    <ul className="limit-bars">
      {limits.map((limit) => {
        const share = limit.limit > 0 ? limit.used / limit.limit : 1;
        return (
          <li key={limit.period}>
            <div className="limit-label">
              <span>
                {limit.used.toLocaleString()} of {limit.limit.toLocaleString()} per {limit.period.replace(/^1 /, '').toLowerCase()}
              </span>
              <span className="muted">
                {limit.remaining.toLocaleString()} left, resets {resetIn(limit.reset_seconds)}
              </span>
            </div>
            <meter
              min={0}
              max={Math.max(limit.limit, 1)}
              value={Math.min(limit.used, Math.max(limit.limit, 1))}
              low={limit.limit * 0.75}
              high={limit.limit * 0.9}
              optimum={0}
              aria-label={`${label}: ${limit.used} of ${limit.limit} per ${limit.period} used`}
              className={share >= 1 ? 'exhausted' : undefined}
            />
          </li>
        );
      })}
    </ul>
  );
}
