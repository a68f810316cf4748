/** The `bundled` Plugin Driver (DESIGN §15): its catalog, its policy support and its rendering. */
export * from "./catalog.js"
export * from "./policy.js"
export * from "./view.js"
export * from "./plan.js"
export * from "./install.js"
