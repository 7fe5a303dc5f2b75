import { ApiError, errorMessage } from '../api/errors.ts';

/**
 * An error as the API described it: its message, the fields it names (unless the form shows
 * them beside its inputs) and the request id an operator can find in the server log.
 */
export function ErrorNotice({
  error,
  title,
  fieldsShown = [],
}: {
  error: unknown;
  title?: string;
  fieldsShown?: string[];
}) {
  if (!error) return null;
  const message = errorMessage(error);
  // A field is listed once: not when the form shows it beside its input, nor when the message
  // already says it (a validation error's message is `field: what is wrong`).
  const fields =
    error instanceof ApiError
      ? error.fields.filter((entry) => !fieldsShown.includes(entry.field) && !message.includes(entry.message))
      : [];
  return (
    <div className="notice error" role="alert">
      {title && <strong>{title}: </strong>}
      {message}
      {fields.length > 0 && (
        <ul>
          {fields.map((entry) => (
            <li key={`${entry.field}:${entry.message}`}>
              <code>{entry.field}</code> {entry.message}
            </li>
          ))}
        </ul>
      )}
      {error instanceof ApiError && error.requestId && (
        <small className="request-id">Request id {error.requestId}</small>
      )}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p role="status" className="muted">
      {label}
    </p>
  );
}
