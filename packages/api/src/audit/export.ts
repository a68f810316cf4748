/**
 * `svc audit export --since <ts> [--ns <ns>] [--url <base>] [--key-file <path>]`: the audit
 * trail as JSON Lines on stdout, one entry per line, oldest first, by paging the audit API with
 * the typed client. The service key is read from `--key-file` (never an argument, which other
 * users could see in the process list) or `SVC_API_KEY`.
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { AuditEntry, type AuditPage, Rfc3339 } from "@svc/core/api"
import { type Client, Credentials, make } from "@svc/core/client"
import { FetchHttpClient } from "@effect/platform"
import { NamespaceId } from "@svc/core/schema"
import { Effect, Either, Schema } from "effect"

const USAGE = "usage: svc audit export --since <RFC 3339> [--ns <namespaceId>] [--url <base URL>] [--key-file <path>]"
const PAGE_SIZE = 200

interface ExportOptions {
  readonly since: string
  readonly namespaceId: NamespaceId | undefined
  readonly baseUrl: string
  readonly key: string
}

class UsageError extends Error {}

const sinceOf = Schema.decodeUnknownEither(Rfc3339)
const namespaceOf = Schema.decodeUnknownEither(NamespaceId)

const readKey = (file: string | undefined): string => {
  if (file === undefined) {
    const key = process.env["SVC_API_KEY"]
    if (key === undefined || key.length === 0) throw new UsageError("a service key is needed: --key-file <path> or SVC_API_KEY")
    return key
  }
  try {
    return readFileSync(file, "utf8").trim()
  } catch {
    throw new UsageError(`cannot read the key file ${file}`)
  }
}

const optionsOf = (args: ReadonlyArray<string>): ExportOptions => {
  let values: Record<string, string | undefined>
  try {
    values = parseArgs({
      args: [...args],
      options: { since: { type: "string" }, ns: { type: "string" }, url: { type: "string" }, "key-file": { type: "string" } },
      strict: true,
      allowPositionals: false
    }).values
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  const since = values["since"]
  if (since === undefined || Either.isLeft(sinceOf(since))) throw new UsageError("--since must be an RFC 3339 date-time")
  const ns = values["ns"]
  const namespace = ns === undefined ? undefined : namespaceOf(ns)
  if (namespace !== undefined && Either.isLeft(namespace)) throw new UsageError("--ns must be a Namespace id (ns_<uuid>)")
  return {
    since,
    namespaceId: namespace === undefined ? undefined : Either.getOrThrow(namespace),
    baseUrl: values["url"] ?? process.env["SVC_BASE_URL"] ?? "http://127.0.0.1:8080",
    key: readKey(values["key-file"])
  }
}

const encodeEntry = Schema.encodeSync(AuditEntry)

const pageOf = (client: Client, options: ExportOptions, cursor: string | undefined): Effect.Effect<AuditPage, unknown> => {
  const urlParams = { since: options.since, limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) }
  return options.namespaceId === undefined
    ? client.audit.list({ urlParams })
    : client.audit.listNamespace({ path: { namespaceId: options.namespaceId }, urlParams })
}

/** Every page in turn, each line written before the next page is asked for. */
const exportAll = (options: ExportOptions) =>
  Effect.gen(function* () {
    const client = yield* make({ baseUrl: options.baseUrl, credentials: Credentials.serviceKey(options.key) })
    let cursor: string | undefined = undefined
    let written = 0
    do {
      const page: AuditPage = yield* pageOf(client, options, cursor)
      const lines = page.entries.map((entry) => `${JSON.stringify(encodeEntry(entry))}\n`).join("")
      if (lines.length > 0) yield* Effect.promise(() => new Promise<void>((resolve) => process.stdout.write(lines, () => resolve())))
      written += page.entries.length
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    return written
  }).pipe(Effect.provide(FetchHttpClient.layer))

const describeFailure = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    const tag = "_tag" in error && typeof error._tag === "string" ? `${error._tag}: ` : ""
    return `${tag}${error.message}`
  }
  return String(error)
}

/** Runs the command; the exit code: 0 done, 1 the service refused or was unreachable, 64 usage. */
export const auditExport = async (args: ReadonlyArray<string>): Promise<number> => {
  let options: ExportOptions
  try {
    options = optionsOf(args)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    process.stderr.write(`svc audit export: ${error.message}\n${USAGE}\n`)
    return 64
  }
  const result = await Effect.runPromise(Effect.either(exportAll(options)))
  if (Either.isRight(result)) return 0
  process.stderr.write(`svc audit export: ${describeFailure(result.left)}\n`)
  return 1
}
