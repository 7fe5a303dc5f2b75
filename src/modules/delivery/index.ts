// The delivery module's public surface.
export { createDeliveryModule } from './delivery.module.ts';
export type { DeliveryKind } from './delivery-references.ts';
export type { DeliveryService } from './delivery.service.ts';
