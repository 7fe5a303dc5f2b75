import type { RouteOptions } from 'fastify';

type HookName = 'onRequest' | 'onSend' | 'onResponse';

/**
 * Adds `hook` to one route's own hooks (from an onRoute hook), after any it already has. A hook
 * only some routes need costs the others nothing, and it knows its route without reading
 * `request.routeOptions`, which Fastify builds afresh (a dozen fields) on every read. A new
 * array every time: Fastify copies a GET route's options for its HEAD route before the onRoute
 * hooks run, and onRoute runs again for that HEAD route.
 */
export function addRouteHook(route: RouteOptions, name: HookName, hook: unknown): void {
  const existing: unknown = route[name];
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  (route as unknown as Record<HookName, unknown[]>)[name] = [...list, hook];
}
