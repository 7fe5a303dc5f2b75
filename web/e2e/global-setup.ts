import { ensureDashboardBuilt } from './support/dashboard-build.ts';

/** The end-to-end tests drive the dashboard the server serves from web/dist. */
export default function setup() {
  ensureDashboardBuilt();
}
