export * from "./driver.js"
export * from "./builtin.js"
