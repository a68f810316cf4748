import { Context } from "effect"

/**
 * Marks an endpoint of the contract that only a development server serves (SPEC 4.2:
 * `POST /installation/bootstrap` is "not in production serving paths"). The OpenAPI document,
 * which comes from the development app (SPEC 9), lists it; a production server answers its path
 * as one that does not exist (404, before authentication: `routeTable.ts`).
 */
export class DevelopmentOnly extends Context.Tag("@svc/core/api/DevelopmentOnly")<DevelopmentOnly, true>() {}
