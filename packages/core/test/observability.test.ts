import { describe, expect, it } from "@effect/vitest"
import { isSecretKey, KnownSecrets, loggerLayer, maskText, ObservabilityLive, REDACTED, scrub } from "@svc/core/observability"
import { Cause, type Console, ConfigProvider, Data, Effect, Layer, LogLevel, Option, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import * as path from "node:path"

const repoRoot = path.resolve(import.meta.dirname, "../../..")

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

/** Runs `effect` with `layer` and returns what the logger wrote, one entry per line. */
const captureLogs = <A, E>(effect: Effect.Effect<A, E>, layer: Layer.Layer<never, unknown>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const base = yield* Effect.console
    const capture: Console.Console = {
      ...base,
      unsafe: { ...base.unsafe, log: (...args: ReadonlyArray<unknown>) => void lines.push(args.map(String).join(" ")) }
    }
    yield* effect.pipe(Effect.provide(layer), Effect.withConsole(capture), Effect.orDie)
    return lines
  })

const parse = (lines: ReadonlyArray<string>) => lines.map((line) => JSON.parse(line) as Record<string, unknown>)

class SignInFailed extends Data.TaggedError("SignInFailed")<{ readonly email: string; readonly password: string }> {}

describe("JSON logs", () => {
  it.live("writes one JSON object per line with level, message, annotations and spans", () =>
    Effect.gen(function*() {
      const lines = yield* captureLogs(
        Effect.logInfo("request handled").pipe(
          Effect.annotateLogs({ requestId: "req_3f1c", status: 201 }),
          Effect.withLogSpan("handler")
        ),
        loggerLayer(LogLevel.Info)
      )
      expect(lines).toHaveLength(1)
      expect(lines[0]).not.toContain("\n")
      const [record] = parse(lines)
      expect(record).toEqual({
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        level: "INFO",
        message: "request handled",
        annotations: { requestId: "req_3f1c", status: 201 },
        spans: { handler: expect.any(Number) },
        fiberId: expect.stringMatching(/^#\d+$/)
      })
    }))

  it.live("adds the failure cause and the current trace and span ids", () =>
    Effect.gen(function*() {
      const lines = yield* captureLogs(
        Effect.logError("work item failed", Cause.fail(new Error("boom"))).pipe(Effect.withSpan("Work.run")),
        loggerLayer(LogLevel.Info)
      )
      const [record] = parse(lines)
      expect(record?.level).toBe("ERROR")
      expect(record?.cause).toContain("Error: boom")
      expect(record?.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(record?.spanId).toMatch(/^[0-9a-f]{16}$/)
    }))

  it.live("honours SVC_LOG_LEVEL (default info)", () =>
    Effect.gen(function*() {
      const logAll = Effect.all([Effect.logDebug("debug"), Effect.logInfo("info"), Effect.logWarning("warning")])
      const levels = (lines: ReadonlyArray<string>) => parse(lines).map((r) => r.message)
      expect(levels(yield* captureLogs(logAll, ObservabilityLive).pipe(withEnv({})))).toEqual(["info", "warning"])
      expect(levels(yield* captureLogs(logAll, ObservabilityLive).pipe(withEnv({ SVC_LOG_LEVEL: "debug" })))).toEqual([
        "debug",
        "info",
        "warning"
      ])
      expect(levels(yield* captureLogs(logAll, ObservabilityLive).pipe(withEnv({ SVC_LOG_LEVEL: "WARN" })))).toEqual([
        "warning"
      ])
    }))
})

describe("secret scrubbing", () => {
  const AUTH_SECRET = "auth-secret-6f1d0c2b9e8a7f6d5c4b3a2918070605"
  const DB_PASSWORD = "db-pass-Zq81Lr"
  const GENERATED = "generated-dev-secret-0a9b8c7d"
  const env = {
    SVC_AUTH_SECRET: AUTH_SECRET,
    DATABASE_URL: `postgres://svc:${DB_PASSWORD}@127.0.0.1:5432/svc`
  }

  const leaky = Effect.gen(function*() {
    yield* Effect.log(`signing with ${AUTH_SECRET}`)
    yield* Effect.log(`connecting to postgres://svc:${DB_PASSWORD}@127.0.0.1:5432/svc`)
    yield* Effect.log("loaded", { note: `the key is ${GENERATED}`, nested: { list: [AUTH_SECRET] } })
    yield* Effect.log("fields", {
      password: "pw-field-value-1",
      apiKey: "api-key-field-value",
      sessionKey: "session-key-field-value",
      headers: { Authorization: "Bearer bearer-token-value", cookie: "svc.session_token=cookie-value" },
      credential: { anything: "credential-value" },
      keyId: "key_visible_id",
      secret: Redacted.make("redacted-field-value")
    })
    yield* Effect.log(Redacted.make("a-redacted-message-value"))
    yield* Effect.log("authorization header was Bearer inline-bearer-value; password=inline-pw-value")
    yield* Effect.logError("sign-in failed", Cause.fail(new SignInFailed({ email: "a@b.c", password: AUTH_SECRET })))
    yield* Effect.logError("crashed", Cause.die(new Error(`cannot use ${AUTH_SECRET}`)))
  }).pipe(
    Effect.annotateLogs({ requestId: "req_1", token: "annotation-token-value", detail: `secret=${GENERATED}` }),
    KnownSecrets.with([GENERATED])
  )

  const leakedValues = [
    AUTH_SECRET,
    DB_PASSWORD,
    GENERATED,
    "pw-field-value-1",
    "api-key-field-value",
    "session-key-field-value",
    "bearer-token-value",
    "cookie-value",
    "credential-value",
    "redacted-field-value",
    "a-redacted-message-value",
    "inline-bearer-value",
    "inline-pw-value",
    "annotation-token-value"
  ]

  it.live("keeps configured secrets, secret-keyed fields and Redacted values out of every line", () =>
    Effect.gen(function*() {
      const lines = yield* captureLogs(leaky, ObservabilityLive).pipe(withEnv(env))
      expect(lines).toHaveLength(8)
      const output = lines.join("\n")
      for (const value of leakedValues) expect(output, value).not.toContain(value)
      expect(output).toContain(REDACTED)
      const records = parse(lines)
      expect(records[0]?.message).toBe(`signing with ${REDACTED}`)
      expect(records[1]?.message).toBe(`connecting to postgres://svc:${REDACTED}@127.0.0.1:5432/svc`)
      expect(records[3]?.message).toEqual([
        "fields",
        {
          password: REDACTED,
          apiKey: REDACTED,
          sessionKey: REDACTED,
          headers: { Authorization: REDACTED, cookie: REDACTED },
          credential: REDACTED,
          keyId: "key_visible_id",
          secret: REDACTED
        }
      ])
      expect(records[4]?.message).toBe(REDACTED)
      expect(records[0]?.annotations).toEqual({ requestId: "req_1", token: REDACTED, detail: `secret=${REDACTED}` })
    }))

  it.live("masks secrets registered with a Layer (e.g. generated development secrets)", () =>
    Effect.gen(function*() {
      const lines = yield* captureLogs(
        Effect.log(`value ${GENERATED} here`),
        Layer.merge(loggerLayer(LogLevel.Info), KnownSecrets.layer([GENERATED]))
      )
      expect(parse(lines)[0]?.message).toBe(`value ${REDACTED} here`)
    }))

  it("recognises secret-looking keys", () => {
    for (const key of ["password", "PASSWORD", "newPassword", "client_secret", "x-api-key", "apiKey", "sessionKey",
      "accessToken", "Authorization", "set-cookie", "credentials", "privateKey", "key"]) {
      expect(isSecretKey(key), key).toBe(true)
    }
    for (const key of ["requestId", "keyId", "apiKeyPath", "tokenCount", "email", "name", "status", "secretName"]) {
      expect(isSecretKey(key), key).toBe(false)
    }
  })

  it("handles values that are not plain JSON", () => {
    const circular: Record<string, unknown> = { name: "a" }
    circular.self = circular
    expect(scrub({ circular, big: 10n, when: new Date(0), some: Option.some("x"), bytes: new Uint8Array(3) }, []))
      .toEqual({
        circular: { name: "a", self: "[circular]" },
        big: "10",
        when: "1970-01-01T00:00:00.000Z",
        some: { _id: "Option", _tag: "Some", value: "x" },
        bytes: "[3 bytes]"
      })
    expect(maskText("uses s3cr3t-value twice: s3cr3t-value", ["s3cr3t-value"])).toBe(
      "uses <redacted> twice: <redacted>"
    )
  })

  it.live("ignores registered values too short to be secrets", () =>
    Effect.gen(function*() {
      const lines = yield* captureLogs(
        Effect.log("status ok, id 12345").pipe(KnownSecrets.with(["ok", "12345"])),
        loggerLayer(LogLevel.Info)
      )
      expect(parse(lines)[0]?.message).toBe("status ok, id 12345")
    }))
})

describe("stdout", () => {
  it("the process writes scrubbed JSON lines to stdout", () => {
    const secret = "stdout-auth-secret-4f3e2d1c0b0a09080706"
    const result = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { Effect } from "effect"
         import { ObservabilityLive } from "@svc/core/observability"
         await Effect.runPromise(Effect.all([
           Effect.log("started with " + process.env.SVC_AUTH_SECRET),
           Effect.log("login", { password: "hunter2-hunter2" }).pipe(Effect.annotateLogs("requestId", "req_x"))
         ]).pipe(Effect.provide(ObservabilityLive)))`
      ],
      { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", SVC_AUTH_SECRET: secret }, encoding: "utf8", timeout: 30_000 }
    )
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(2)
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(records.map((r) => r.message)).toEqual([`started with ${REDACTED}`, ["login", { password: REDACTED }]])
    expect(records[1]?.annotations).toEqual({ requestId: "req_x" })
    expect(result.stdout).not.toContain(secret)
    expect(result.stdout).not.toContain("hunter2-hunter2")
  })
})
