export { IdempotencyLive, IdempotencyMiddlewaresLive, IdempotencyWithheldLive } from "./middleware.js"
