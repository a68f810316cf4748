/**
 * External sign-in as a process wires it: `ApiServerLive` built from a real configuration
 * (variables and an Installation configuration file, loaded as `svc api` loads them) takes the
 * providers and SVC_BASE_URL from there. Also the provider schema's own rules.
 */
import { describe, expect, it } from "@effect/vitest"
import { ApiServerLive } from "@svc/api"
import { InstallationConfig, loadStartupConfig, startupConfigLayer } from "@svc/core/config"
import { freePort } from "@svc/core/embedded-postgres"
import { ConfigProvider, Context, Effect, Either, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { serverOptions } from "../src/serverOptions.js"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { expectError } from "./support/externalSignInServer.js"
import { MockOAuthProvider } from "./support/oauthProvider.js"
import { CookieJar, start } from "./support/signInFlow.js"
import { testSecretDriver } from "../../../testing/drivers.js"
import * as Compute from "@svc/core/drivers/compute"

const BASE_URL = "https://svc.example.com"

class Listening extends Context.Tag("test/Listening")<Listening, { readonly baseUrl: string }>() {}

const processLike = Layer.unwrapScoped(
  Effect.gen(function* () {
    const mock = yield* MockOAuthProvider
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "svc-signin-wiring-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const file = path.join(dir, "installation.json")
    fs.writeFileSync(file, JSON.stringify({
      providers: {
        idprovider: {
          issuer: mock.issuer,
          authorizationUrl: `${mock.issuer}/authorize`,
          tokenUrl: `${mock.issuer}/token`,
          clientId: "svctest",
          clientSecret: "wiring-client-secret"
        }
      }
    }))
    const port = yield* Effect.promise(() => freePort())
    const config = yield* loadStartupConfig.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(
        new Map([
          ["SVC_HOST", "127.0.0.1"],
          ["SVC_PORT", String(port)],
          ["SVC_BASE_URL", BASE_URL],
          ["SVC_DATA_DIR", dir],
          ["SVC_INSTALLATION_CONFIG", file]
        ])
      )),
      Effect.orDie
    )
    return Layer.merge(
      ApiServerLive(serverOptions(config)).pipe(
        Layer.provide(Layer.merge(testSecretDriver, Compute.layerFromConfiguration)),
        Layer.provide(startupConfigLayer(config))
      ),
      Layer.succeed(Listening, { baseUrl: `http://127.0.0.1:${port}` })
    )
  })
).pipe(Layer.provideMerge(MockOAuthProvider.layer), Layer.provideMerge(migratedDatabaseLayer))

describe("external sign-in wiring", () => {
  it.layer(processLike, { timeout: 60_000 })((it) => {
    it.effect("the server takes its providers and base URL from the configuration", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* Listening
        const mock = yield* MockOAuthProvider
        const origin = { origin: BASE_URL }
        const started = yield* start(baseUrl, "idprovider", new CookieJar(), origin)
        expect(started.status).toBe(200)
        const url = new URL(started.body.data.url)
        expect(`${url.origin}${url.pathname}`).toBe(`${mock.issuer}/authorize`)
        expect(url.searchParams.get("redirect_uri")).toBe(`${BASE_URL}/api/auth/providers/idprovider/callback`)
        // The configured origin is SVC_BASE_URL's, and codehost is not configured.
        expectError(yield* start(baseUrl, "idprovider", new CookieJar()), 403, "FORBIDDEN")
        expectError(yield* start(baseUrl, "codehost", new CookieJar(), origin), 404, "NOT_FOUND")
      }))
  })

  it("codehost needs its user API; the token endpoint authentication is one of two", () => {
    const provider = {
      issuer: "https://code.example.com",
      authorizationUrl: "https://code.example.com/login/oauth/authorize",
      tokenUrl: "https://code.example.com/login/oauth/access_token",
      clientId: "svc",
      clientSecret: "secret"
    }
    const decode = Schema.decodeUnknownEither(InstallationConfig)
    expect(Either.isLeft(decode({ providers: { codehost: provider } }))).toBe(true)
    expect(Either.isRight(decode({ providers: { idprovider: provider } }))).toBe(true)
    const withUserApi = { ...provider, userInfoUrl: "https://api.code.example.com/user" }
    expect(Either.isRight(decode({ providers: { codehost: withUserApi } }))).toBe(true)
    expect(Either.isRight(decode({ providers: { codehost: { ...withUserApi, tokenEndpointAuthMethod: "client_secret_post" } } })))
      .toBe(true)
    expect(Either.isLeft(decode({ providers: { codehost: { ...withUserApi, tokenEndpointAuthMethod: "private_key_jwt" } } })))
      .toBe(true)
  })
})
