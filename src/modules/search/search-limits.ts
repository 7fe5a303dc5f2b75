/** docs/api.md "Messenger search": the limits the spec leaves open. */
export const SEARCH_LIMITS = {
  maxPageSize: 100,
  defaultContextChars: 500,
  minContextChars: 10,
  maxContextChars: 5000,
  maxChannelIds: 500,
  /** More matches than this earn a "broad query" warning. */
  broadMatchThreshold: 10_000,
} as const;
