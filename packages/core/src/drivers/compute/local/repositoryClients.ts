/**
 * Repository client material on a `local` host (DESIGN §12, docs/decisions/
 * repository-credentials.md "Worker"): per revision, `<agent>/repo-credentials/<revisionId>/`
 * holds one bearer file per repository, a Git credential helper that hands Git the bearer of the
 * repository it asks about, a `gitconfig` rewriting `https://github.com/` to the credential
 * service's listener, and a code-host CLI `gh/hosts.yml`. The gateway finds them through
 * `GIT_CONFIG_GLOBAL` and `GH_CONFIG_DIR`.
 *
 * When gateways run as their own users, everything here is root's and readable by the Agent's
 * group only (directories 0750, files 0640, the helper 0750), like the rendered configuration:
 * the gateway can use the material but neither change it nor plant links the service would
 * follow. Otherwise (the service's own user) directories are 0700 and files 0600.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect, Redacted } from "effect"
import type { GatewayRef, RepositoryClient, RepositoryClients } from "../driver.js"
import { type Confinement, detectConfinement, usesGatewayUsers } from "./confinement.js"
import { failure, GatewayCodes, host, namespaceDir } from "./gatewayFailures.js"
import { ensureGatewayUser, type GatewayUser, gatewayUserName } from "./gatewayUser.js"
import { agentLayout, isSafeSegment, prepareAgentLayout, readIfExists } from "./layout.js"
import { withExportedSpan } from "../../../observability/spans.js"

export const REPOSITORY = /^[a-z0-9][a-z0-9-]{0,38}\/[a-z0-9._-]{1,100}$/
/** Paths that go into a shell-quoted helper line and a Git config value unescaped. */
const PLAIN_PATH = /^[^'"\\\n\r]+$/

export const materialRoot = (agentRoot: string): string => path.join(agentRoot, "repo-credentials")

/** `owner/name` as a file name: `owner+name` (`+` is in neither part). */
const fileName = (repository: string): string => repository.replace("/", "+")

/**
 * A Git credential helper: the bearer of the repository Git asks about, from the file named by
 * the shell expression `filePrefix` followed by `owner<separator>name` (lowercase).
 */
export const helperScript = (filePrefix: string, separator: string): string => `#!/bin/sh
# Git credential helper written by the service: the bearer of the repository Git asks about.
test "$1" = get || exit 0
path=
while IFS= read -r line; do
  case "$line" in path=*) path=\${line#path=} ;; esac
done
path=\${path#/}
path=\${path%/}
path=\${path%.git}
name=$(printf '%s' "$path" | tr 'A-Z/' 'a-z${separator}')
file=${filePrefix}"$name"
test -f "$file" || exit 0
printf 'username=x-access-token\\npassword=%s\\n' "$(cat "$file")"
`

/** Git's configuration: GitHub rewritten to the listener, whose credentials come from `helper` (a Git config value). */
export const gitConfig = (listenerUrl: string, helper: string): string => [
  `[url "${listenerUrl}/"]`,
  `\tinsteadOf = https://github.com/`,
  `[credential "${listenerUrl}"]`,
  `\tuseHttpPath = true`,
  `\thelper =`,
  `\thelper = ${helper}`,
  ``
].join("\n")

export const hostsYaml = (listenerHost: string, bearer: string): string =>
  `${JSON.stringify(listenerHost)}:\n    oauth_token: ${JSON.stringify(bearer)}\n    user: x-access-token\n    git_protocol: https\n`

interface Modes {
  readonly owner: GatewayUser | undefined
}

const directory = async (dir: string, { owner }: Modes) => {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 })
  const stat = await fs.lstat(dir)
  if (!stat.isDirectory()) throw new Error(`not a directory: ${dir}`)
  if (owner !== undefined) await fs.lchown(dir, 0, owner.gid)
  await fs.chmod(dir, owner === undefined ? 0o700 : 0o750)
}

/** Written beside, handed over, then renamed into place: never through a link. */
const file = async (target: string, content: string, { owner }: Modes, executable = false) => {
  const temporary = `${target}.${process.pid}.${Date.now()}.tmp`
  const mode = owner === undefined ? (executable ? 0o700 : 0o600) : (executable ? 0o750 : 0o640)
  await fs.writeFile(temporary, content, { mode, flag: "wx" })
  try {
    if (owner !== undefined) await fs.lchown(temporary, 0, owner.gid)
    await fs.chmod(temporary, mode)
    await fs.rename(temporary, target)
  } catch (error) {
    await fs.rm(temporary, { force: true })
    throw error
  }
}

export const makeLocalRepositoryClients = (options: {
  readonly dataDir: string
  readonly confinement?: Confinement | undefined
}): RepositoryClients => {
  let detected: Promise<Confinement> | undefined
  const confinementNow = (): Promise<Confinement> =>
    options.confinement !== undefined ? Promise.resolve(options.confinement) : (detected ??= detectConfinement())

  const agentRootOf = (ref: { readonly namespaceId: string; readonly agentId: string }) =>
    isSafeSegment(ref.agentId) && isSafeSegment(ref.namespaceId)
      ? Effect.succeed(agentLayout(namespaceDir(options.dataDir, ref.namespaceId), ref.agentId))
      : Effect.fail(failure(GatewayCodes.GATEWAY_SPEC_INVALID, "The Agent id cannot name a runtime directory.", true))

  const revisionDir = (ref: GatewayRef) =>
    isSafeSegment(ref.revisionId)
      ? Effect.map(agentRootOf(ref), (layout) => ({ layout, dir: path.join(materialRoot(layout.root), ref.revisionId) }))
      : Effect.fail(failure(GatewayCodes.GATEWAY_SPEC_INVALID, "The revision id cannot name a directory.", true))

  const refused = (message: string) => Effect.fail(failure(GatewayCodes.GATEWAY_SPEC_INVALID, message, true))

  const write: RepositoryClients["write"] = (ref, client: RepositoryClient) =>
    Effect.gen(function* () {
      const { layout, dir } = yield* revisionDir(ref)
      if (!REPOSITORY.test(client.repository)) return yield* refused("The repository name cannot name client material.")
      const listener = URL.canParse(client.listenerUrl) ? new URL(client.listenerUrl) : undefined
      if (listener === undefined || !PLAIN_PATH.test(dir) || !/^https?:$/.test(listener.protocol)) {
        return yield* refused("The repository client material cannot be written for this listener or data directory.")
      }
      const nsExists = yield* Effect.promise(() => fs.stat(path.dirname(path.dirname(layout.root))).then(() => true, () => false))
      if (!nsExists) {
        return yield* failure(GatewayCodes.NAMESPACE_RUNTIME_MISSING, "The Namespace's runtime directory is not provisioned yet.", false)
      }
      yield* host("repository-material", ref, async () => {
        const owner = usesGatewayUsers(await confinementNow())
          ? await ensureGatewayUser(gatewayUserName(layout.root), layout.root)
          : undefined
        const modes: Modes = { owner }
        await prepareAgentLayout(layout, owner)
        await directory(materialRoot(layout.root), modes)
        await directory(dir, modes)
        await directory(path.join(dir, "bearers"), modes)
        await directory(path.join(dir, "gh"), modes)
        const name = fileName(client.repository)
        const bearer = Redacted.value(client.bearer)
        await file(path.join(dir, "bearers", name), bearer, modes)
        await file(path.join(dir, "bearers", `${name}.session`), client.sessionId, modes)
        const origin = listener.origin
        await file(path.join(dir, "listener"), listener.host, modes)
        await file(path.join(dir, "credential-helper"), helperScript(`'${dir}/bearers/'`, "+"), modes, true)
        await file(path.join(dir, "gitconfig"), gitConfig(origin, `"!'${path.join(dir, "credential-helper")}'"`), modes)
        // The CLI keeps one token per host: the first repository's (by name) serves it.
        const first = (await sessionFiles(dir)).map((f) => f.slice(0, -".session".length)).sort()[0] ?? name
        const firstBearer = first === name ? bearer : (await readIfExists(path.join(dir, "bearers", first))) ?? bearer
        await file(path.join(dir, "gh", "hosts.yml"), hostsYaml(listener.host, firstBearer), modes)
      })
    }).pipe(withExportedSpan("LocalCompute.writeRepositoryClient", { attributes: { agentId: ref.agentId, sessionId: client.sessionId } }))

  const sessionFiles = async (dir: string): Promise<Array<string>> =>
    (await fs.readdir(path.join(dir, "bearers")).catch(() => [] as Array<string>)).filter((f) => f.endsWith(".session"))

  const sessions: RepositoryClients["sessions"] = (ref) =>
    Effect.gen(function* () {
      const { dir } = yield* revisionDir(ref)
      return yield* host("repository-material", ref, async () => {
        const ids: Array<string> = []
        for (const name of await sessionFiles(dir)) {
          const id = await readIfExists(path.join(dir, "bearers", name))
          const bearerPresent = await readIfExists(path.join(dir, "bearers", name.slice(0, -".session".length)))
          if (id !== undefined && bearerPresent !== undefined) ids.push(id.trim())
        }
        return ids
      })
    })

  const environment: RepositoryClients["environment"] = (ref) =>
    Effect.gen(function* () {
      const { dir } = yield* revisionDir(ref)
      const listenerHost = yield* host("repository-material", ref, () => readIfExists(path.join(dir, "listener")))
      const config = yield* host("repository-material", ref, () => readIfExists(path.join(dir, "gitconfig")))
      if (listenerHost === undefined || config === undefined) return {} as Record<string, string>
      return {
        GIT_CONFIG_GLOBAL: path.join(dir, "gitconfig"),
        GIT_TERMINAL_PROMPT: "0",
        GH_CONFIG_DIR: path.join(dir, "gh"),
        GH_HOST: listenerHost,
        GH_NO_UPDATE_NOTIFIER: "1"
      }
    })

  const remove: RepositoryClients["remove"] = (ref) =>
    Effect.flatMap(revisionDir(ref), ({ dir }) => host("repository-material", ref, () => fs.rm(dir, { recursive: true, force: true })))

  const revisions: RepositoryClients["revisions"] = (ref) =>
    Effect.flatMap(agentRootOf(ref), (layout) =>
      host("repository-material", { ...ref, revisionId: "none" }, async () =>
        (await fs.readdir(materialRoot(layout.root)).catch(() => [] as Array<string>)).filter(isSafeSegment)))

  return { write, sessions, environment, revisions, remove }
}
