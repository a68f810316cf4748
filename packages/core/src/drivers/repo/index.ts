export * from "./control.js"
export * from "./grant.js"
