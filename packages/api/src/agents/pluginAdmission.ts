/**
 * Admission of an Agent's plugin desired state (SPEC 2.9, 7.3, DESIGN §15). The structure is
 * the request schema's; this is what the selected Plugin Driver adds: a non-empty selection
 * without a Plugin Driver is 501, and whatever the Driver does not support (an ID outside its
 * catalog, an unknown tool, an unsupported approval mode, reviewer or approvers, a `driverPolicy`
 * field it does not own) is 400 `INVALID_REQUEST` with a detail at each place.
 */
import type { Plugins } from "@svc/core/api"
import type { InstallationConfig } from "@svc/core/config"
import { selectionProblems } from "@svc/core/drivers/plugin"
import { InvalidRequest, NotImplemented } from "@svc/core/errors"
import { Limits } from "@svc/core/schema"
import { Effect } from "effect"

export const admitPlugins = (installation: InstallationConfig, plugins: Plugins | undefined) =>
  Effect.gen(function* () {
    if (plugins === undefined || Object.keys(plugins).length === 0) return
    if (installation.drivers.plugin === undefined) {
      return yield* new NotImplemented({ message: "Plugin selections need a Plugin Driver, and none is selected." })
    }
    const problems = selectionProblems(plugins)
    if (problems.length > 0) {
      return yield* new InvalidRequest({
        message: "The plugin selection asks for what the Plugin Driver does not support.",
        details: problems.slice(0, Limits.errorDetails)
      })
    }
  })
