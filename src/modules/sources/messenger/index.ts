// The messenger source's corpus as the search module and the tools use it.
export { corpusChannels, generateCorpus } from './demo-corpus.ts';
export { createCorpusWriter, type ChannelBatch, type MessageInput } from './ingest/corpus-writer.ts';
export { messageDetails, type MessageRow } from './message-hits.ts';
