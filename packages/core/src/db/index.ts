export * as Migrations from "./migrate.js"
