import { ErrorNotice } from '../../ui/notices.tsx';
import { EXPORT_FORMATS, useSearchExport } from './search-queries.ts';

/** A download mutation of one of several formats, as the export hooks return it. */
interface FormatDownload<Format extends string> {
  mutate(format: Format): void;
  isPending: boolean;
  variables: Format | undefined;
  error: unknown;
}

/** One button per format, the one being fetched marked, and why an export failed. */
export function ExportFormatButtons<Format extends string>(props: {
  label: string;
  note: string;
  formats: readonly Format[];
  download: FormatDownload<Format>;
}) {
  const { download } = props;
  return (
    <div>
      <div className="actions" role="group" aria-label={props.label}>
        <span className="muted">{props.note}</span>
        {props.formats.map((format) => (
          <button key={format} type="button" onClick={() => download.mutate(format)} disabled={download.isPending}>
            {download.isPending && download.variables === format ? `${format.toUpperCase()}…` : format.toUpperCase()}
          </button>
        ))}
      </div>
      <ErrorNotice error={download.error} title="Export failed" />
    </div>
  );
}

/** Downloads a recorded search in each export format (every match, full texts). */
export function ExportButtons({ historyId }: { historyId: number }) {
  return (
    <ExportFormatButtons
      label="Export results"
      note="Export"
      formats={EXPORT_FORMATS}
      download={useSearchExport(historyId)}
    />
  );
}
