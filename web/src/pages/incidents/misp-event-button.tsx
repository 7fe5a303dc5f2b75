import { useMutation } from '@tanstack/react-query';
import { useApi } from '../../api/api-context.tsx';
import { filenameFrom, saveFile } from '../../api/download.ts';
import { ApiError } from '../../api/errors.ts';
import { ErrorNotice } from '../../ui/notices.tsx';

/** Downloads the incident as a MISP event (docs/misp.md), to import in MISP by hand. */
function useMispEventDownload(matchId: number) {
  const { client } = useApi();
  return useMutation({
    mutationFn: async () => {
      const { data, error, response } = await client.GET('/service/alert_system_incident_misp_event/{id}/', {
        params: { path: { id: matchId } },
        parseAs: 'blob',
      });
      if (!response.ok || !data) throw ApiError.from(response, error);
      saveFile(data, filenameFrom(response.headers.get('content-disposition')) ?? `misp-event-${matchId}.json`);
    },
  });
}

/** The "MISP event" button beside the incident's other exports. */
export function MispEventButton({ matchId }: { matchId: number }) {
  const download = useMispEventDownload(matchId);
  return (
    <div>
      <div className="actions" role="group" aria-label="MISP export">
        <button type="button" onClick={() => download.mutate()} disabled={download.isPending}>
          {download.isPending ? 'MISP event…' : 'MISP event'}
        </button>
      </div>
      <ErrorNotice error={download.error} title="MISP export failed" />
    </div>
  );
}
