/**
 * `svc worker`: one worker replica of the production split. Any number may run against one
 * database; they coordinate only through it.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { workerProcess } from "./process.js"

workerProcess().pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
