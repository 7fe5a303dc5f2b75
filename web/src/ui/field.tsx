import { useId, type ReactNode } from 'react';

/** What a Field hands to its input so the label, hint and error are announced with it. */
export interface FieldControlProps {
  id: string;
  'aria-describedby': string | undefined;
  'aria-invalid': boolean | undefined;
}

/**
 * A labelled form control with an optional hint and an error from the API (ApiError.fieldMessage):
 * `<Field label="Email">{(props) => <input {...props} type="email" />}</Field>`.
 */
export function Field(props: {
  label: ReactNode;
  hint?: ReactNode;
  error?: string;
  children: (control: FieldControlProps) => ReactNode;
}) {
  const id = useId();
  const hintId = props.hint ? `${id}-hint` : undefined;
  const errorId = props.error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.children({ id, 'aria-describedby': describedBy, 'aria-invalid': props.error ? true : undefined })}
      {props.hint && (
        <span id={hintId} className="hint">
          {props.hint}
        </span>
      )}
      {props.error && (
        <span id={errorId} className="error">
          {props.error}
        </span>
      )}
    </div>
  );
}
