export * from "./client.js"
export * from "./protocol.js"
export * from "./service.js"
