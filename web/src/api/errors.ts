/** One entry of an error body's `fields` (docs/api.md "Errors"). */
export interface FieldError {
  field: string;
  message: string;
}

interface ErrorBody {
  code?: string;
  message?: string;
  fields?: FieldError[];
  request_id?: string;
  retry_after_seconds?: number;
}

/**
 * A failed API call, carrying the server's error body: every 4xx/5xx answers
 * `{code, message, fields?, request_id}`, plus `retry_after_seconds` on a 429 (and `position` on a
 * query syntax error, whose message already says where, for people).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fields: FieldError[];
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, body: ErrorBody) {
    super(body.message ?? `the server answered ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = body.code ?? (status === 0 ? 'network_error' : 'http_error');
    this.fields = body.fields ?? [];
    this.requestId = body.request_id;
    this.retryAfterSeconds = body.retry_after_seconds;
  }

  /** The message of the first error on `field`, to show beside that input. */
  fieldMessage(field: string): string | undefined {
    return this.fields.find((entry) => entry.field === field)?.message;
  }

  /**
   * From a failed openapi-fetch call: `error` is the body it already read (parsed JSON, or the
   * text when it was not JSON, e.g. a proxy's HTML error page).
   */
  static from(response: Response, error: unknown): ApiError {
    return new ApiError(response.status, error && typeof error === 'object' ? (error as ErrorBody) : {});
  }

  static network(cause: unknown): ApiError {
    const error = new ApiError(0, { message: 'The server cannot be reached. Check your connection and try again.' });
    error.cause = cause;
    return error;
  }
}

/** What to show for any error a query or mutation rejected with. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.retryAfterSeconds !== undefined)
      return `${error.message} (try again in ${formatWait(error.retryAfterSeconds)})`;
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

function formatWait(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 5400) return `${Math.ceil(seconds / 60)} min`;
  return `${Math.ceil(seconds / 3600)} h`;
}
