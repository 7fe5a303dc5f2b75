import type { RouteOptions } from 'fastify';

export interface UsageService {
  slug: string;
  name: string;
  feature: string;
}

/** `/service/messenger-channels/` → `messenger-channels` */
const slugFromUrl = (url: string) => url.replace(/^\/service\//, '').split('/')[0] ?? url;

const titleCase = (text: string) => text.replace(/[-_]+/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());

/** The usage services, learned from the rate-limited routes and their config (http/rate-limit.plugin.ts). */
export function createUsageCatalog() {
  const services = new Map<string, UsageService>();
  const slugByUrl = new Map<string, string>();
  return {
    register(route: RouteOptions) {
      const config = route.config as { rateLimit?: { service: string; name?: string } } | undefined;
      const slug = config?.rateLimit?.service ?? slugFromUrl(route.url);
      slugByUrl.set(route.url, slug);
      const tags = (route.schema as { tags?: string[] } | undefined)?.tags;
      if (!services.has(slug) || config?.rateLimit?.name) {
        services.set(slug, { slug, name: config?.rateLimit?.name ?? titleCase(slug), feature: tags?.[0] ?? 'general' });
      }
    },
    slugOf: (url: string) => slugByUrl.get(url) ?? slugFromUrl(url),
    list: () =>
      [...services.values()].sort((a, b) => a.feature.localeCompare(b.feature) || a.slug.localeCompare(b.slug)),
  };
}

export type UsageCatalog = ReturnType<typeof createUsageCatalog>;
