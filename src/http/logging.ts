import {
  LogController,
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';

/**
 * Log lines never carry credentials or secrets: request bodies are never logged, and the
 * request serializer leaves headers out; should a debug serializer add them, these stay hidden.
 * The paths are exact on purpose: wildcard paths made every log line cost twice as much.
 */
const logRedactPaths = ['req.headers.authorization', 'req.headers.cookie'];

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** False only when a pino logger says the level is off (other loggers: always try). */
const enabled = (log: FastifyBaseLogger, level: Level) =>
  (log as Partial<Pick<RequestLogger, 'isLevelEnabled'>>).isLevelEnabled?.(level) !== false;

/**
 * One access-log line per request, written when it completes, instead of Fastify's two: at full
 * load the log writes cost more than the rest of a small request. The start of a request is
 * still there at debug level. The entries are built only when their level is on.
 */
export class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest) {
    if (enabled(request.log, 'debug')) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (error)
      reply.log.error({ req: request, res: reply, responseTime: reply.elapsedTime, err: error }, 'request errored');
    else if (enabled(reply.log, 'info'))
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

type PinoLike = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger, whose pino child (the request id bound to it) is made on the first line
 * the request writes. Fastify makes a child per request, and pino's `child` serializes the
 * bindings and sets up every level's method: about 1.5 µs and several objects per request, for
 * a logger that at `warn` nearly every request never writes to. The lines are the same.
 */
class RequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: PinoLike,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.made ? (this.made as PinoLike).isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }

  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }

  private write(level: Level, args: unknown[]): void {
    if (this.isLevelEnabled(level)) (this.real[level] as (...args: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]) {
    this.write('fatal', args);
  }
  error(...args: unknown[]) {
    this.write('error', args);
  }
  warn(...args: unknown[]) {
    this.write('warn', args);
  }
  info(...args: unknown[]) {
    this.write('info', args);
  }
  debug(...args: unknown[]) {
    this.write('debug', args);
  }
  trace(...args: unknown[]) {
    this.write('trace', args);
  }
  silent() {}
}

/** Fastify's childLoggerFactory: a RequestLogger when the logger is pino's, else Fastify's own child. */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) =>
  typeof (logger as Partial<PinoLike>).isLevelEnabled === 'function' && options.level === undefined
    ? (new RequestLogger(logger as PinoLike, bindings, options) as unknown as FastifyBaseLogger)
    : logger.child(bindings, options);

/** The server's JSON log on stdout. */
export function serverLogger(level: string): NonNullable<FastifyServerOptions['logger']> {
  return { level, redact: { paths: logRedactPaths, censor: '[redacted]' } };
}
