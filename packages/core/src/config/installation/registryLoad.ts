/**
 * Reading the repository registry at start-up (SPEC 2.14, DESIGN §12): every process that has a
 * `code_host` Backend reads and validates the file at its `registryPath`, and a bad file stops
 * the process with exit 78 (see `loadOrExit`), one line per problem.
 */
import { Data, Effect, Option, Schema } from "effect"
import { type InstallationConfigProblem, problemsOf, readJsonFile } from "./load.js"
import { RepositoryRegistry } from "./registry.js"
import type { InstallationConfig } from "./schema.js"

export class RepositoryRegistryError extends Data.TaggedError("RepositoryRegistryError")<{
  readonly file: string
  readonly problems: ReadonlyArray<InstallationConfigProblem>
}> {
  override get message(): string {
    return this.problems.map((p) => `repository registry (${this.file}): ${p.path === "" ? "" : `${p.path}: `}${p.message}`)
      .join("\n")
  }
}

/** Decodes already-parsed JSON for the Backend `backendId`; every problem is reported. */
export const decodeRepositoryRegistry = (file: string, backendId: string, input: unknown) =>
  Schema.decodeUnknown(RepositoryRegistry, { onExcessProperty: "error", errors: "all" })(input).pipe(
    Effect.mapError((error) => new RepositoryRegistryError({ file, problems: problemsOf(error) })),
    Effect.filterOrFail(
      (registry) => registry.backendId === backendId,
      () =>
        new RepositoryRegistryError({
          file,
          problems: [{ path: "backendId", message: `must be ${JSON.stringify(backendId)}, the code_host Backend's id` }]
        })
    )
  )

/** The registry of the configured `code_host` Backend; none when there is no such Backend. */
export const loadRepositoryRegistry = (
  installation: InstallationConfig
): Effect.Effect<Option.Option<RepositoryRegistry>, RepositoryRegistryError> => {
  const backend = installation.backends.find((b) => b.type === "code_host")
  if (backend === undefined || backend.type !== "code_host") return Effect.succeedNone
  const file = backend.configuration.registryPath
  return readJsonFile(file).pipe(
    Effect.mapError((problems) => new RepositoryRegistryError({ file, problems })),
    Effect.flatMap((json) => decodeRepositoryRegistry(file, backend.id, json)),
    Effect.map(Option.some)
  )
}
