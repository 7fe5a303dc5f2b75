/**
 * A writer of more benchmark messages in a process of its own (search-load.ts, ingestInChild):
 * argv[2] is JSON { shape, count, round, chunk }; the store comes from the DRAGNET_* variables;
 * the figures are printed as one JSON line.
 */
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { ingestMore, moreMessages, type CorpusShape } from './search-load.ts';

const input = JSON.parse(process.argv[2]!) as {
  shape: CorpusShape & { start: string };
  count: number;
  round: number;
  chunk: number;
};
const container = await createContainer(loadConfig(process.env));
try {
  const shape = { ...input.shape, start: new Date(input.shape.start) };
  const figures = await ingestMore(container, moreMessages(shape, input.count, input.round), input.chunk);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} finally {
  await container.close();
}
