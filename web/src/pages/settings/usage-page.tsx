import { useId, useState } from 'react';
import type { Ok } from '../../api/types.ts';
import { resetIn } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { useUsage } from './usage-queries.ts';

type Usage = Ok<'/service/get_usage_limits/', 'get'>;
type Limit = NonNullable<Usage['total']>[number];

/** Settings → Usage (spec 2.11): every limit of the organization, how much is used and left. */
export function UsagePage() {
  const filterId = useId();
  const [filter, setFilter] = useState('');
  const [usedOnly, setUsedOnly] = useState(false);
  const usage = useUsage();
  const text = filter.trim().toLowerCase();
  const services = usage.data?.services
    .filter(
      (service) =>
        !text || `${service.service_name} ${service.service_slug} ${service.feature}`.toLowerCase().includes(text),
    )
    .filter((service) => !usedOnly || service.limits.some((limit) => limit.used > 0));
  return (
    <Page title="Usage">
      <p className="muted">
        Successful requests count against these limits; a refused or failed one does not. Windows reset on UTC calendar
        boundaries.
      </p>
      {usage.isPending && <Loading />}
      <ErrorNotice error={usage.error} />
      {usage.data?.total && (
        <section className="card" aria-labelledby="account-wide">
          <h2 id="account-wide">Whole account</h2>
          <ul className="limit-bars">
            {usage.data.total.map((limit) => (
              <LimitBar key={limit.period} limit={limit} label="Whole account" />
            ))}
          </ul>
        </section>
      )}
      {usage.data && (
        <section aria-labelledby="per-service">
          <h2 id="per-service">Per endpoint</h2>
          <div className="actions">
            <div className="field">
              <label htmlFor={filterId}>Find an endpoint</label>
              <input id={filterId} type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
            </div>
            <label className="check">
              <input type="checkbox" checked={usedOnly} onChange={(event) => setUsedOnly(event.target.checked)} />
              Only endpoints in use
            </label>
          </div>
          {services?.length === 0 && <p>No endpoint matches.</p>}
          {features(services ?? []).map(([feature, list]) => (
            <section key={feature} aria-label={feature}>
              <h3>{feature}</h3>
              <ul className="limit-bars">
                {list.flatMap((service) =>
                  service.limits.map((limit) => (
                    <LimitBar
                      key={`${service.service_slug} ${limit.period}`}
                      limit={limit}
                      label={service.service_name}
                      detail={service.service_slug}
                    />
                  )),
                )}
              </ul>
            </section>
          ))}
        </section>
      )}
    </Page>
  );
}

/** The endpoints grouped by feature, features in the order the server lists them. */
function features(services: Usage['services']): [string, Usage['services']][] {
  const groups = new Map<string, Usage['services']>();
  for (const service of services) groups.set(service.feature, [...(groups.get(service.feature) ?? []), service]);
  return [...groups];
}

/** One window of one limit: used of the limit as a bar, what remains and when it resets. */
function LimitBar({ limit, label, detail }: { limit: Limit; label: string; detail?: string }) {
  const max = Math.max(limit.limit, 1);
  const period = limit.period.replace(/^1 /, '').toLowerCase();
  return (
    <li className={limit.remaining === 0 ? 'exhausted' : undefined}>
      <div className="limit-label">
        <span>
          <strong>{label}</strong> {detail && <code className="muted">{detail}</code>}
        </span>
        <span>
          {limit.used.toLocaleString()} of {limit.limit.toLocaleString()} per {period} ·{' '}
          {limit.remaining.toLocaleString()} left · resets {resetIn(limit.reset_seconds)}
        </span>
      </div>
      <meter
        min={0}
        max={max}
        value={Math.min(limit.used, max)}
        low={max * 0.75}
        high={max * 0.9}
        optimum={0}
        aria-label={`${label}: ${limit.used} of ${limit.limit} per ${period} used`}
      />
    </li>
  );
}
