import { HttpApi } from "@effect/platform"
import { HealthApi } from "./health/api.js"
import { withApiErrors } from "./http/apiErrors.js"
import { documented } from "./http/documented.js"

/** The control plane's HTTP contract. Groups are added here as capabilities land. */
export const SvcApi = documented(withApiErrors(HttpApi.make("svc")).add(HealthApi))
