import { useId } from 'react';
import { Field } from '../../ui/field.tsx';
import { ChannelFilter } from '../search/channel-filter.tsx';
import { controlFor, exampleText, listElements, optionLabel, type ArgValue, type ArgValues } from './args-form.ts';
import type { CatalogParam, CatalogService } from './catalog.ts';
import { MESSENGER_SERVICE_ID } from './new-rule-search.ts';

/** "channel_ids" → "Channel ids". */
export const humanize = (name: string) => (name.charAt(0).toUpperCase() + name.slice(1)).replaceAll('_', ' ');

function hintOf(param: CatalogParam, extra?: string) {
  const example = exampleText(param);
  return (
    [param.hint, extra, example !== undefined ? `Example: ${example}` : undefined].filter(Boolean).join(' · ') ||
    undefined
  );
}

/**
 * The inputs of a service's args, one per args_schema param (args-form.ts picks the control):
 * labelled, with the param's hint and example, and the error of that param.
 */
export function ArgsFields(props: {
  service: CatalogService;
  values: ArgValues;
  errors: Record<string, string>;
  onChange: (name: string, value: ArgValue) => void;
  /** What the args are for: a rule watches, a search looks. */
  legend?: string;
}) {
  const { service, values, errors, onChange } = props;
  return (
    <fieldset>
      <legend>
        {props.legend ?? 'What to watch'} ({service.alias})
      </legend>
      {service.args_schema.params.map((param) => (
        <ArgInput
          key={param.name}
          param={param}
          value={values[param.name]}
          error={errors[param.name]}
          onChange={(value) => onChange(param.name, value)}
          channels={service.id === MESSENGER_SERVICE_ID && param.name === 'channel_ids'}
        />
      ))}
    </fieldset>
  );
}

function ArgInput(props: {
  param: CatalogParam;
  value: ArgValue | undefined;
  error?: string;
  onChange: (value: ArgValue) => void;
  channels: boolean;
}) {
  const { param, value, error, onChange } = props;
  const groupId = useId();
  const control = controlFor(param);
  const label = (
    <>
      {humanize(param.name)}
      {param.required && <span className="muted"> (required)</span>}
    </>
  );
  const text = typeof value === 'string' ? value : '';

  if (props.channels) {
    // The messenger's channel ids are picked from the tracked channels, as on the search page.
    const ids = listElements(text, 'Int').map(Number).filter(Number.isSafeInteger);
    return (
      <>
        <ChannelFilter selected={ids} onChange={(next) => onChange(next.join('\n'))} />
        {error && <p className="error">{error}</p>}
      </>
    );
  }

  switch (control.kind) {
    case 'checkbox':
      return (
        <div className="field">
          <label className="check">
            <input
              type="checkbox"
              checked={value === true}
              onChange={(event) => onChange(event.target.checked)}
              aria-describedby={`${groupId}-hint`}
            />
            {label}
          </label>
          <span id={`${groupId}-hint`} className="hint">
            {hintOf(param)}
          </span>
          {error && <span className="error">{error}</span>}
        </div>
      );
    case 'choices': {
      const ticked = Array.isArray(value) ? value : [];
      return (
        <fieldset aria-describedby={`${groupId}-hint`} aria-invalid={error ? true : undefined}>
          <legend>{label}</legend>
          <div className="actions">
            {control.options.map((option) => (
              <label key={option} className="check">
                <input
                  type="checkbox"
                  checked={ticked.includes(String(option))}
                  onChange={(event) =>
                    onChange(
                      event.target.checked
                        ? [...ticked, String(option)]
                        : ticked.filter((entry) => entry !== String(option)),
                    )
                  }
                />
                {optionLabel(param, option)}
              </label>
            ))}
          </div>
          <p id={`${groupId}-hint`} className="hint muted">
            {hintOf(param, param.required ? 'Tick at least one.' : 'None ticked: all of them.')}
          </p>
          {error && <p className="error">{error}</p>}
        </fieldset>
      );
    }
    default:
      return (
        <Field
          label={label}
          hint={hintOf(
            param,
            control.kind === 'list'
              ? control.element === 'String'
                ? 'One per line.'
                : 'Separated by commas or lines.'
              : undefined,
          )}
          error={error}
        >
          {(field) => {
            switch (control.kind) {
              case 'yes-no':
                return (
                  <select {...field} value={text} onChange={(event) => onChange(event.target.value)}>
                    <option value="">Default</option>
                    <option value="true">Yes</option>
                    <option value="false">No</option>
                  </select>
                );
              case 'select':
                return (
                  <select {...field} value={text} onChange={(event) => onChange(event.target.value)}>
                    <option value="">{param.required ? 'Choose…' : 'Not set'}</option>
                    {control.options.map((option) => (
                      <option key={option} value={String(option)}>
                        {optionLabel(param, option)}
                      </option>
                    ))}
                  </select>
                );
              case 'list':
                return <textarea {...field} rows={3} value={text} onChange={(event) => onChange(event.target.value)} />;
              case 'number':
                return (
                  <input
                    {...field}
                    type="text"
                    inputMode={control.integer ? 'numeric' : 'decimal'}
                    value={text}
                    onChange={(event) => onChange(event.target.value)}
                  />
                );
              default:
                return (
                  <input
                    {...field}
                    type="text"
                    value={text}
                    required={param.required}
                    onChange={(event) => onChange(event.target.value)}
                  />
                );
            }
          }}
        </Field>
      );
  }
}
