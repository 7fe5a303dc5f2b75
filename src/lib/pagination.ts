/** `{count, next, previous, results}` pages (the alert_system_* lists), with relative links. */
export interface PageRequest {
  page: number;
  page_size: number;
}

export const pageWindow = ({ page, page_size }: PageRequest) => ({ offset: (page - 1) * page_size, limit: page_size });

export function linkedPage<T>(
  path: string,
  request: PageRequest,
  total: number,
  results: T[],
  extraQuery: Record<string, unknown> = {},
) {
  const link = (page: number) => {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(extraQuery)) {
      for (const item of Array.isArray(value) ? value : [value])
        if (item !== undefined && item !== null) query.append(key, String(item));
    }
    query.set('page', String(page));
    query.set('page_size', String(request.page_size));
    return `${path}?${query.toString()}`;
  };
  const last = Math.max(1, Math.ceil(total / request.page_size));
  return {
    count: total,
    next: request.page < last ? link(request.page + 1) : null,
    previous: request.page > 1 ? link(Math.min(request.page - 1, last)) : null,
    results,
  };
}
