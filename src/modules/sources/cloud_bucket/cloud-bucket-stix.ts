import type { StixDescription } from '../kit/source.ts';
import { factLines, observables, present, str, url } from '../common/stix/stix-kit.ts';

/** An exposed bucket object: the file (its name and size) and its public URL (docs/stix.md). */
export function cloudBucketStix(data: Record<string, unknown>): StixDescription {
  const key = str(data.key) ?? '';
  const name = key.split('/').pop() || key || str(data.bucket) || 'object';
  return {
    observables: observables(
      {
        type: 'file',
        properties: present({
          name,
          size: typeof data.size === 'number' && data.size >= 0 ? data.size : null,
          x_dragnet_bucket: str(data.bucket),
          x_dragnet_object_key: key,
        }),
      },
      url(data.url),
    ),
    summary: `Exposed ${str(data.provider) ?? ''} bucket object ${str(data.bucket) ?? ''}/${key}`,
    text: factLines([
      ['Provider', str(data.provider)],
      ['Region', str(data.region)],
      ['Bucket', str(data.bucket)],
      ['Key', key],
      ['Size', data.size],
      ['Last modified', str(data.last_modified)],
      ['URL', str(data.url)],
      ['Matched on', str(data.matched_on)],
    ]),
  };
}
