/**
 * The body of `POST .../service-accounts/{id}/credentials` is `{}` (SPEC 4.5) and bad input gets
 * a clear error and changes nothing. Found by the bad-input fuzz test: an empty Effect struct
 * accepts any non-null value, so `{"x": 1}`, `"abc"`, `5` or `[]` reached the handler and were
 * answered 503 without a ServiceAccount Driver, and with one they issued a credential. Now each
 * is a 400 `INVALID_REQUEST` naming the field or the body, before any Driver or vendor is asked.
 * (Without a Driver: bad-input-fuzz.test.ts, whose server has none.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { accountsPath, createAccount, managedApiLayer, notEmptyBodies, rows, Vendor } from "./support/serviceAccountWorld.js"

const setUp = (name: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(`${name}@example.com`)
    const ns = yield* seedNamespace(name)
    const account = expectData(yield* createAccount(baseUrl, admin.headers, ns, name), 201) as { id: string }
    const path = `${accountsPath(ns)}/${account.id}/credentials`
    return { account, issue: (body: string) => send(baseUrl, "POST", path, admin.headers, body) }
  })

describe("issuing a service-account credential with a Driver selected refuses every body but {}", () => {
  it.layer(managedApiLayer(), { timeout: 120_000 })((it) => {
    it.effect("with a ServiceAccount Driver: 400 with details, no credential upstream or here; {} still issues", () =>
      Effect.gen(function* () {
        const vendor = yield* Vendor
        const { account, issue } = yield* setUp("sa-issue-body")
        const issued = () => vendor.credentials().length
        const before = issued()
        for (const [body, details] of notEmptyBodies) {
          expectError(yield* issue(body), 400, "INVALID_REQUEST", details)
          expect(yield* rows(account.id)).toEqual({ accounts: ["ready"], sealed: 0 })
          expect(issued()).toBe(before)
        }
        expect((yield* issue("{}")).status).toBe(201)
        expect(yield* rows(account.id)).toEqual({ accounts: ["ready"], sealed: 1 })
        expect(issued()).toBe(before + 1)
      }))
  })
})
