import { Link } from '@tanstack/react-router';
import { ErrorNotice } from '../../ui/notices.tsx';
import { useSiemTargets } from '../settings/delivery-queries.ts';

/**
 * The rule form's SIEM targets (docs/siem.md): Splunk HEC and syslog targets that also get each
 * new hit, on top of the recipients or webhook a rule needs. Reads the targets itself.
 */
export function SiemTargetsField(props: { value: number[]; onChange: (ids: number[]) => void; error?: string }) {
  const targets = useSiemTargets();
  return (
    <fieldset aria-invalid={props.error ? true : undefined}>
      <legend>SIEM targets</legend>
      <ErrorNotice error={targets.error} title="The SIEM targets cannot be shown" />
      {targets.data?.length === 0 && (
        <p className="muted">
          No SIEM targets yet. <Link to="/settings/siem">Add one in Settings</Link>.
        </p>
      )}
      {targets.data && targets.data.length > 0 && (
        <div className="actions">
          {targets.data.map((target) => (
            <label key={target.id} className="check">
              <input
                type="checkbox"
                checked={props.value.includes(target.id)}
                onChange={(event) =>
                  props.onChange(
                    event.target.checked ? [...props.value, target.id] : props.value.filter((id) => id !== target.id),
                  )
                }
              />
              {target.name}
            </label>
          ))}
        </div>
      )}
      <p className="hint muted">Each new hit also goes to these as an event, besides the email and webhook.</p>
      {props.error && <p className="error">{props.error}</p>}
    </fieldset>
  );
}

/** The rule page's line for its SIEM targets, by name (inside the summary's `<dl>`). */
export function SiemTargetsSummary({ ids }: { ids: number[] }) {
  const targets = useSiemTargets();
  const names = ids.map((id) => targets.data?.find((target) => target.id === id)?.name ?? `#${id}`);
  return (
    <>
      <dt>SIEM targets</dt>
      <dd>{names.length ? names.join(', ') : 'none'}</dd>
    </>
  );
}
