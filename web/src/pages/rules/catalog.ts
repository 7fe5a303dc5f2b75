import { useQuery } from '@tanstack/react-query';
import { useApi } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';

/** A monitorable source (spec 2.9): its args_schema, fields and frequency floor. */
export type CatalogService = Ok<'/service/alert_system_service_get_service_list/', 'get'>[number];
export type CatalogParam = CatalogService['args_schema']['params'][number];

/** The catalog is the same for every organization and changes only with a new server version. */
export function useCatalog() {
  const { client } = useApi();
  return useQuery({
    queryKey: ['service-catalog'],
    queryFn: () => unwrap(client.GET('/service/alert_system_service_get_service_list/')),
    staleTime: 60 * 60_000,
  });
}
