import { Type } from '@sinclair/typebox';

const Tag = Type.Object({ name: Type.String(), colour: Type.String() });

const Attribute = Type.Object({
  uuid: Type.String({ format: 'uuid' }),
  type: Type.String({ description: 'MISP attribute type (docs/misp.md "Mapping")' }),
  category: Type.String(),
  value: Type.String(),
  to_ids: Type.Boolean({ description: 'True only for what an indicator names (a lookalike domain, a phishing URL)' }),
  comment: Type.String(),
  distribution: Type.String(),
  timestamp: Type.String({ description: 'Epoch seconds' }),
  disable_correlation: Type.Boolean(),
});

/** MISP's event format (draft-dulaunoy-misp-core-format), the fields Dragnet fills. */
export const MispEventBody = Type.Object(
  {
    Event: Type.Object({
      uuid: Type.String({ format: 'uuid', description: 'UUIDv5 of the organization and the incident: stable' }),
      info: Type.String(),
      date: Type.String({ description: 'YYYY-MM-DD' }),
      timestamp: Type.String({ description: 'Epoch seconds of the last change' }),
      analysis: Type.String(),
      threat_level_id: Type.String(),
      Orgc: Type.Object({ name: Type.String(), uuid: Type.String({ format: 'uuid' }) }),
      Tag: Type.Array(Tag),
      published: Type.Boolean(),
      publish_timestamp: Type.String(),
      distribution: Type.String(),
      Attribute: Type.Array(Attribute),
    }),
  },
  { title: 'MispEvent' },
);

export const FeedEventParams = Type.Object({
  file: Type.String({
    pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\.json$',
    description: '<event uuid>.json, as manifest.json lists the events',
  }),
});
