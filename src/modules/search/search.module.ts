import type { Store } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import type { BackgroundTasks, Log } from '../../lib/log.ts';
import { createChannelRepository } from './channel.repository.ts';
import { createFollowUpTokens } from './follow-up-token.ts';
import { createCorpusWriter } from '../sources/messenger/index.ts';
import { searchRoutes } from './search.routes.ts';
import { createSearchRepository } from './search.repository.ts';
import { createSearchService } from './search.service.ts';
import { createTrigramStats } from '../sources/index.ts';

export function createSearchModule(deps: {
  store: Store;
  clock: Clock;
  jwtKey: Uint8Array;
  log: Log;
  background: BackgroundTasks;
}) {
  // Channel lists and filters are reads: on the readers, never behind a writer.
  const channels = createChannelRepository(deps.store.reader);
  const followUps = createFollowUpTokens({ jwtKey: deps.jwtKey, clock: deps.clock });
  const service = createSearchService({
    history: deps.store.searchHistory,
    engine: deps.store.engine,
    reads: deps.store.reads,
    searches: createSearchRepository({
      reader: deps.store.reader,
      readerSlots: deps.store.readerSlots,
      engine: deps.store.engine,
    }),
    followUps,
    trigrams: createTrigramStats(deps.store.reader),
    clock: deps.clock,
  });
  const writer = createCorpusWriter({
    db: deps.store.db,
    engine: deps.store.engine,
    clock: deps.clock,
    log: deps.log,
    background: deps.background,
  });
  return {
    service,
    channels,
    followUps,
    writer,
    routes: searchRoutes({ search: service, channels }),
  };
}
