// The delivery module's public surface.
export { createDeliveryModule, type DeliveryConfig } from './delivery.module.ts';
export type { DeliveryKind, DeliveryService, SystemSenderConfig } from './delivery.service.ts';
