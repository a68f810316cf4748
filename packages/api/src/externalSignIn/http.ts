import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Forbidden } from "@svc/core/errors"
import { Effect, Layer } from "effect"
import { BrowserOrigin, SvcApi } from "@svc/core/api"
import { isTrustedBrowserMutation } from "../auth/origin.js"
import { AuthSettings } from "../auth/settings.js"
import { ExternalSignIn } from "./service.js"

/** SPEC 4.1 / 5.3: `start` and `result` need the exact configured Origin (403 otherwise). */
export const BrowserOriginLive = Layer.effect(
  BrowserOrigin,
  Effect.map(AuthSettings, (settings) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      isTrustedBrowserMutation(request.headers, settings.trustedOrigin)
        ? Effect.void
        : Effect.fail(new Forbidden({ message: "The request's Origin is not trusted." }))))
)

export const ExternalSignInLive = HttpApiBuilder.group(SvcApi, "externalSignIn", (handlers) =>
  Effect.map(ExternalSignIn, (signIn) =>
    handlers
      .handle("codehostStart", () => signIn.start("codehost"))
      .handle("codehostCallback", ({ request }) => signIn.callback("codehost", request))
      .handle("codehostResult", ({ payload, request }) => signIn.result("codehost", request, payload.attemptId))
      .handle("idproviderStart", () => signIn.start("idprovider"))
      .handle("idproviderCallback", ({ request }) => signIn.callback("idprovider", request))
      .handle("idproviderResult", ({ payload, request }) => signIn.result("idprovider", request, payload.attemptId))
  )
)
