/**
 * The one error set of the service. Every failure that reaches a client is an AppError whose
 * code maps to exactly one HTTP status through `statusByCode`; the error handler renders it.
 */
export const statusByCode = {
  validation_failed: 400,
  bad_request: 400,
  invalid_credentials: 401,
  otp_required: 401,
  invalid_otp: 401,
  unauthorized: 401,
  forbidden: 403,
  /** An API key of scope read on a route that changes something (docs/api.md "API keys"). */
  insufficient_scope: 403,
  /** Something only a person signed in with a password may do: never an API key. */
  session_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  /** An Accept header the endpoint cannot answer (the TAXII server's media types). */
  not_acceptable: 406,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_attempts: 429,
  /** The client went away before its answer (nginx's code): nobody reads the body, the log does. */
  client_closed_request: 499,
  rate_limited: 429,
  internal_error: 500,
  bad_gateway: 502,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof statusByCode;

export interface FieldError {
  field: string;
  message: string;
  /** The numbered validation rule broken (spec 2.10), where one applies. */
  rule?: number;
}

export interface AppErrorOptions {
  fields?: FieldError[];
  retryAfterSeconds?: number;
  /** Extra top-level body properties some errors must carry (the 429 body of spec 7). */
  extra?: Record<string, unknown>;
  /** Response headers the error carries (e.g. X-RateLimit-* on a 429). */
  headers?: Record<string, string | number>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly statusCode: number;
  readonly fields?: FieldError[];
  readonly retryAfterSeconds?: number;
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string | number>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.statusCode = statusByCode[code];
    this.fields = options.fields;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.extra = options.extra;
    this.headers = options.headers;
  }
}

export const validationError = (field: string, message: string): AppError =>
  new AppError('validation_failed', `${field}: ${message}`, { fields: [{ field, message }] });

export const notFound = (what: string): AppError => new AppError('not_found', `${what} not found`);

export const conflict = (message: string): AppError => new AppError('conflict', message);

export const isUniqueViolation = (error: unknown): boolean => {
  const e = error as { code?: string } | undefined;
  // SQLite reports SQLITE_CONSTRAINT_UNIQUE, PostgreSQL the SQLSTATE 23505.
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === '23505';
};
