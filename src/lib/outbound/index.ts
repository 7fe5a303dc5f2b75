export { blockedRange } from './address-policy.ts';
export { parseAllowList, type AllowList } from './allow-list.ts';
export { BlockedAddressError, createOutboundGuard, type OutboundGuard } from './outbound-guard.ts';
export { createOutboundHttp, MAX_REDIRECTS, type OutboundHttp, type OutboundResponse } from './outbound-http.ts';
