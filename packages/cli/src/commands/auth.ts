/**
 * `svc login`, `svc logout`, `svc whoami`. A login is checked against the service before it is
 * stored; nothing printed ever contains the key, the password or the cookie.
 */
import { Cookies } from "@effect/platform"
import { SignInBody } from "@svc/core/api"
import { Credentials } from "@svc/core/client"
import { Unauthenticated } from "@svc/core/errors"
import { Effect, Option, Ref } from "effect"
import * as fs from "node:fs/promises"
import { parse, requiredFlag, stringFlag } from "../args.js"
import type { CommandContext, CommandGroup } from "../command.js"
import { clientFor, withConnection } from "../connection.js"
import { readCredentials, removeCredentials, type StoredCredentials, writeCredentials } from "../credentialStore.js"
import { NotSignedIn, UsageError } from "../failures.js"
import { decodeInput } from "../input.js"
import { fields, print } from "../output.js"
import { promptHidden, readStdin } from "../stdin.js"

const LOGIN = "svc login --url <base> (--key-file <file> | --key - | --email <email> [--password-stdin])"

const baseUrl = (raw: string): Effect.Effect<string, UsageError> =>
  Effect.try({
    try: () => {
      const url = new URL(raw)
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme")
      if (url.username !== "" || url.password !== "") throw new Error("credentials in URL")
      return url.toString().replace(/\/+$/, "")
    },
    catch: () => new UsageError({ message: `--url must be an http(s) URL without credentials\nusage: ${LOGIN}` })
  })

/** A bootstrap key file (`data.key`, SPEC 5.6) or a file holding just the key. */
const keyFromFile = (file: string) =>
  Effect.tryPromise({
    try: () => fs.readFile(file, "utf8"),
    catch: () => new UsageError({ message: `--key-file ${file} cannot be read` })
  }).pipe(Effect.map((text) => {
    try {
      const parsed = JSON.parse(text) as { data?: { key?: unknown; id?: unknown; servicePrincipalId?: unknown } }
      if (typeof parsed.data?.key === "string") {
        return {
          key: parsed.data.key,
          keyId: typeof parsed.data.id === "string" ? parsed.data.id : undefined,
          servicePrincipalId: typeof parsed.data.servicePrincipalId === "string" ? parsed.data.servicePrincipalId : undefined
        }
      }
    } catch {
      // Not JSON: the file holds the key itself.
    }
    return { key: text.trim(), keyId: undefined, servicePrincipalId: undefined }
  }))

const describe = (stored: StoredCredentials): ReadonlyArray<readonly [string, string | undefined]> =>
  stored.kind === "key"
    ? [["url", stored.url], ["kind", "service key"], ["keyId", stored.keyId], ["servicePrincipalId", stored.servicePrincipalId]]
    : [["url", stored.url], ["kind", "session"], ["email", stored.email]]

const publicView = (stored: StoredCredentials) =>
  stored.kind === "key"
    ? { url: stored.url, kind: stored.kind, keyId: stored.keyId ?? null, servicePrincipalId: stored.servicePrincipalId ?? null }
    : { url: stored.url, kind: stored.kind, email: stored.email }

const loginWithKey = (url: string, source: Effect.Effect<{ key: string; keyId?: string | undefined; servicePrincipalId?: string | undefined }, UsageError>) =>
  Effect.gen(function* () {
    const found = yield* source
    if (found.key === "") return yield* new UsageError({ message: "the key is empty" })
    const client = yield* clientFor(url, Credentials.serviceKey(found.key))
    // Any authenticated read proves the key; a rejected one is 401 and nothing is stored.
    yield* client.namespaces.list({ urlParams: { limit: 1 } })
    return { url, kind: "key", ...found } as StoredCredentials
  })

const loginWithPassword = (url: string, email: string, password: Effect.Effect<string, UsageError>) =>
  Effect.gen(function* () {
    const payload = yield* Effect.flatMap(password, (secret) => decodeInput(SignInBody, { email, password: secret }, "the email or password"))
    const jar = yield* Ref.make(Cookies.empty)
    const client = yield* clientFor(url, Credentials.cookieJar({ jar }))
    yield* client.authSessions.signInEmail({ payload })
    const cookies = Cookies.toRecord(yield* Ref.get(jar))
    if (Object.keys(cookies).length === 0) return yield* new Unauthenticated({ message: "the service set no session cookie" })
    return { url, kind: "session", email, cookies } as StoredCredentials
  })

const login = (argv: ReadonlyArray<string>, context: CommandContext) =>
  Effect.gen(function* () {
    const args = yield* parse(argv, {
      url: { type: "string" },
      "key-file": { type: "string" },
      key: { type: "string" },
      email: { type: "string" },
      "password-stdin": { type: "boolean" }
    }, { min: 0, max: 0, usage: LOGIN })
    const url = yield* Effect.flatMap(requiredFlag(args, "url", LOGIN), baseUrl)
    const keyFile = stringFlag(args, "key-file")
    const key = stringFlag(args, "key")
    const email = stringFlag(args, "email")
    const chosen = [keyFile, key, email].filter((value) => value !== undefined).length
    if (chosen !== 1) return yield* new UsageError({ message: `give exactly one of --key-file, --key -, --email\nusage: ${LOGIN}` })
    // A key on the command line would land in shell history and `ps`: only stdin is accepted.
    if (key !== undefined && key !== "-") return yield* new UsageError({ message: `--key takes only "-" (read from stdin)\nusage: ${LOGIN}` })
    const passwordStdin = args.values["password-stdin"] === true
    if (passwordStdin && email === undefined) return yield* new UsageError({ message: `--password-stdin goes with --email\nusage: ${LOGIN}` })
    const stored = keyFile !== undefined
      ? yield* loginWithKey(url, keyFromFile(keyFile))
      : key !== undefined
      ? yield* loginWithKey(url, Effect.map(readStdin, (text) => ({ key: text.trim() })))
      : yield* loginWithPassword(url, email!, passwordStdin
        ? readStdin
        : process.stdin.isTTY
        ? promptHidden("password: ")
        : Effect.fail(new UsageError({ message: `no terminal to ask for the password: use --password-stdin\nusage: ${LOGIN}` })))
    yield* writeCredentials(context.credentialsFile, stored)
    yield* print(args.json, publicView(stored), () =>
      stored.kind === "key" ? `signed in to ${url} with a service key` : `signed in to ${url} as ${stored.email}`)
  })

const logout = (argv: ReadonlyArray<string>, context: CommandContext) =>
  Effect.gen(function* () {
    const args = yield* parse(argv, {}, { min: 0, max: 0, usage: "svc logout" })
    const existing = yield* readCredentials(context.credentialsFile)
    if (Option.isNone(existing)) {
      return yield* print(args.json, { signedOut: false }, () => "not signed in")
    }
    if (existing.value.kind === "session") {
      // A session that already ended is as good as signed out.
      yield* withConnection(context.credentialsFile, ({ client }) => client.authSessions.signOut()).pipe(
        Effect.catchIf((error) => error instanceof Unauthenticated, () => Effect.void)
      )
    }
    yield* removeCredentials(context.credentialsFile)
    yield* print(args.json, { signedOut: true }, () =>
      existing.value.kind === "session" ? "signed out" : "forgot the service key (it stays valid until revoked or expired)")
  })

const whoami = (argv: ReadonlyArray<string>, context: CommandContext) =>
  Effect.gen(function* () {
    const args = yield* parse(argv, {}, { min: 0, max: 0, usage: "svc whoami" })
    yield* withConnection(context.credentialsFile, ({ client, stored }) =>
      Effect.gen(function* () {
        if (stored.kind === "key") {
          yield* client.namespaces.list({ urlParams: { limit: 1 } })
          return yield* print(args.json, publicView(stored), () => fields(describe(stored)))
        }
        const session = yield* client.authSessions.session()
        if (session === null) return yield* new NotSignedIn({ message: "the stored session has ended; run svc login again" })
        const view = { url: stored.url, kind: stored.kind, id: session.id, email: session.email, name: session.name }
        return yield* print(args.json, view, () => fields([["url", view.url], ["kind", "session"], ["id", view.id], ["email", view.email], ["name", view.name]]))
      }))
  })

export const authCommands: ReadonlyArray<CommandGroup> = [
  { names: ["login"], usage: [[LOGIN, "sign in and keep the credential in an owner-only file"]], run: login },
  { names: ["logout"], usage: [["svc logout", "sign the session out and remove the credential file"]], run: logout },
  { names: ["whoami"], usage: [["svc whoami", "who the stored credential is"]], run: whoami }
]
