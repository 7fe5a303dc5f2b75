import { ErrorNotice } from '../../ui/notices.tsx';
import { EXPORT_FORMATS, useSearchExport } from './search-queries.ts';

/** Downloads a recorded search in each export format (every match, full texts). */
export function ExportButtons({ historyId }: { historyId: number }) {
  const download = useSearchExport(historyId);
  return (
    <div>
      <div className="actions" role="group" aria-label="Export results">
        <span className="muted">Export</span>
        {EXPORT_FORMATS.map((format) => (
          <button key={format} type="button" onClick={() => download.mutate(format)} disabled={download.isPending}>
            {download.isPending && download.variables === format ? `${format.toUpperCase()}…` : format.toUpperCase()}
          </button>
        ))}
      </div>
      <ErrorNotice error={download.error} title="Export failed" />
    </div>
  );
}
