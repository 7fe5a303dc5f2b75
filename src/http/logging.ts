import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';

/**
 * Log lines never carry credentials or secrets: request bodies are never logged, and the
 * request serializer leaves headers out; should a debug serializer add them, these stay hidden.
 * The paths are exact on purpose: wildcard paths made every log line cost twice as much.
 */
const logRedactPaths = ['req.headers.authorization', 'req.headers.cookie'];

/**
 * One access-log line per request, written when it completes, instead of Fastify's two: at full
 * load the log writes cost more than the rest of a small request. The start of a request is
 * still there at debug level.
 */
export class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest) {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    const entry = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...entry, err: error }, 'request errored');
    else reply.log.info(entry, 'request completed');
  }
}

/** The server's JSON log on stdout. */
export function serverLogger(level: string): NonNullable<FastifyServerOptions['logger']> {
  return { level, redact: { paths: logRedactPaths, censor: '[redacted]' } };
}
