// The delivery module's public surface.
export { createDeliveryModule } from './delivery.module.ts';
export type { DeliveryKind, DeliveryService } from './delivery.service.ts';
