export * from "./driver.js"
export * from "./builtin.js"
export * from "./select.js"
