/**
 * SPEC 2.15 rules for the ServiceAccount Driver that a single Backend entry cannot state: the
 * Driver only has an upstream client through the `model_accounts` Backend, so selecting it
 * without that Backend would leave every managed operation without credentials.
 */
import type { Schema } from "effect"

interface Selection {
  readonly drivers: { readonly serviceAccount?: { readonly id: string } | undefined }
  readonly backends: ReadonlyArray<{ readonly type: string }>
}

export const serviceAccountDriverIssues = (config: Selection): ReadonlyArray<Schema.FilterIssue> =>
  config.drivers.serviceAccount !== undefined && !config.backends.some((backend) => backend.type === "model_accounts")
    ? [{
      path: ["drivers", "serviceAccount"],
      message: "needs a model_accounts Backend naming it (its upstream client and admin key come from that Backend)"
    }]
    : []
