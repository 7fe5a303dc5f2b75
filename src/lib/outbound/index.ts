export { parseAllowList } from './allow-list.ts';
export { BlockedAddressError, createOutboundGuard, type OutboundGuard } from './outbound-guard.ts';
export { createOutboundHttp, type OutboundHttp, type OutboundResponse } from './outbound-http.ts';
