// The delivery module's public surface.
export { createDeliveryModule, type DeliveryConfig } from './delivery.module.ts';
export type { DeliveryKind } from './delivery-references.ts';
export type { DeliveryService } from './delivery.service.ts';
export type { SystemSenderConfig } from './sender.service.ts';
