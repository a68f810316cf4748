/**
 * The `local` Compute Driver (DESIGN §8): everything on this host under `<SVC_DATA_DIR>`.
 *
 * Namespace half: a runtime directory `<dataDir>/namespaces/<namespaceId>`, mode 0700, created
 * and removed idempotently; it survives restarts because it is only ever removed by teardown.
 * `local` has no runtime namespaces an operator could prepare, so it does not support
 * `existingNamespace` (SPEC 4.2: the API answers 409); should a Namespace with one reach the
 * driver anyway, provisioning fails permanently and teardown removes nothing.
 *
 * Agent half: one real OpenClaw gateway child process per Agent (`local/gateways.ts`), run by the
 * pinned runtime that `svc runtime install` puts under `SVC_RUNTIME_DIR`.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect, Layer } from "effect"
import { ProcessConfiguration } from "../../config/index.js"
import { ComputeDriver, type ComputeDriverShape, ComputeFailure } from "./driver.js"
import { describeConfinement, detectConfinement } from "./local/confinement.js"
import { type LocalGatewayOptions, makeLocalGateways } from "./local/gateways.js"
import { makeLocalRepositoryClients } from "./local/repositoryClients.js"
import { defaultRuntimeRoot } from "./local/runtime.js"
import { withExportedSpan } from "../../observability/spans.js"

export const LocalComputeCodes = {
  EXISTING_NAMESPACE_UNSUPPORTED: "EXISTING_NAMESPACE_UNSUPPORTED",
  RUNTIME_DIRECTORY_UNAVAILABLE: "RUNTIME_DIRECTORY_UNAVAILABLE"
} as const

/** The directory holding every Namespace's runtime directory. */
export const namespacesRoot = (dataDir: string): string => path.join(dataDir, "namespaces")

/** A Namespace's runtime directory. The id is a checked `ns_<uuidv4>`, so it cannot escape. */
export const namespaceDirectory = (dataDir: string, namespaceId: string): string =>
  path.join(namespacesRoot(dataDir), namespaceId)

const unavailable = (operation: string, namespaceId: string) => (cause: unknown) =>
  Effect.logWarning("local compute: runtime directory operation failed", { operation, namespaceId, cause: String(cause) })
    .pipe(
      Effect.zipRight(
        new ComputeFailure({
          code: LocalComputeCodes.RUNTIME_DIRECTORY_UNAVAILABLE,
          message: "The Namespace's runtime directory could not be prepared or removed on this host.",
          permanent: false
        })
      )
    )

/** Settings of the Agent half; everything but the data directory has a default. */
export type LocalComputeOptions = Partial<Omit<LocalGatewayOptions, "dataDir">>

/** The local driver over one data directory. */
export const makeLocalCompute = (dataDir: string, options: LocalComputeOptions = {}): ComputeDriverShape => ({
  id: "local",
  supportsExistingNamespace: false,
  provisionNamespace: (namespace) =>
    namespace.existingNamespace !== undefined
      ? new ComputeFailure({
        code: LocalComputeCodes.EXISTING_NAMESPACE_UNSUPPORTED,
        message: "The local Compute Driver cannot bind an existing runtime namespace.",
        permanent: true
      })
      : Effect.tryPromise(async () => {
        const root = namespacesRoot(dataDir)
        await fs.mkdir(root, { recursive: true, mode: 0o700 })
        const dir = namespaceDirectory(dataDir, namespace.id)
        await fs.mkdir(dir, { recursive: true, mode: 0o700 })
        // mkdir's mode is masked by the umask and ignored for an existing directory.
        await fs.chmod(dir, 0o700)
      }).pipe(
        Effect.catchAll(unavailable("provision", namespace.id)),
        withExportedSpan("LocalCompute.provisionNamespace", { attributes: { namespaceId: namespace.id } })
      ),
  teardownNamespace: (namespace) =>
    namespace.existingNamespace !== undefined
      ? Effect.void // operator-owned: never removed
      : Effect.tryPromise(() =>
        fs.rm(namespaceDirectory(dataDir, namespace.id), { recursive: true, force: true })
      ).pipe(
        Effect.catchAll(unavailable("teardown", namespace.id)),
        withExportedSpan("LocalCompute.teardownNamespace", { attributes: { namespaceId: namespace.id } })
      ),
  ...makeLocalGateways({ runtimeRoot: defaultRuntimeRoot(dataDir), ...options, dataDir }),
  repositoryClients: makeLocalRepositoryClients({ dataDir, confinement: options.confinement })
})

/** `local` over an explicit data directory (tests). */
export const layerLocal = (dataDir: string, options: LocalComputeOptions = {}): Layer.Layer<ComputeDriver> =>
  Layer.succeed(ComputeDriver, makeLocalCompute(path.resolve(dataDir), options))

/**
 * `local` over the process's `SVC_DATA_DIR` and `SVC_RUNTIME_DIR`. Says once at start-up how
 * gateways are confined on this host, with a warning when they share the service's user.
 */
export const layerLocalFromProcess: Layer.Layer<ComputeDriver, never, ProcessConfiguration> = Layer.effect(
  ComputeDriver,
  Effect.gen(function* () {
    const config = yield* ProcessConfiguration
    const confinement = yield* Effect.promise(() => detectConfinement())
    const log = confinement.kind === "bubblewrap" ? Effect.logInfo : Effect.logWarning
    yield* log("local compute: gateway confinement", { confinement: confinement.kind, detail: describeConfinement(confinement) })
    return makeLocalCompute(config.dataDir, { runtimeRoot: config.runtimeDir, confinement })
  })
)
