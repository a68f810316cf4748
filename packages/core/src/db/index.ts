export * as Migrations from "./migrate.js"
export * from "./unavailable.js"
