import { useMutation } from '@tanstack/react-query';
import { useApi } from '../../api/api-context.tsx';
import { ApiError } from '../../api/errors.ts';
import { filenameFrom, saveFile } from '../../api/download.ts';
import { ErrorNotice } from '../../ui/notices.tsx';

const FORMATS = ['csv', 'json', 'xml', 'pdf'] as const;
type Format = (typeof FORMATS)[number];

/** Downloads a recorded search in each export format (every match, full texts). */
export function ExportButtons({ historyId }: { historyId: number }) {
  const { client } = useApi();
  const download = useMutation({
    mutationFn: async (format: Format) => {
      const { data, error, response } = await client.GET('/service/messenger-search-history-export/{history_id}/', {
        params: { path: { history_id: historyId }, query: { format } },
        parseAs: 'blob',
      });
      if (!response.ok || !data) throw ApiError.from(response, error);
      saveFile(data, filenameFrom(response.headers.get('content-disposition')) ?? `dragnet-search-${historyId}.${format}`);
    },
  });
  return (
    <div>
      <div className="actions" role="group" aria-label="Export results">
        <span className="muted">Export</span>
        {FORMATS.map((format) => (
          <button key={format} type="button" onClick={() => download.mutate(format)} disabled={download.isPending}>
            {download.isPending && download.variables === format ? `${format.toUpperCase()}…` : format.toUpperCase()}
          </button>
        ))}
      </div>
      <ErrorNotice error={download.error} title="Export failed" />
    </div>
  );
}
