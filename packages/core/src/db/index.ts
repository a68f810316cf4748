export * as Migrations from "./migrate.js"
export { databaseLayer, type DatabaseOptions } from "./pg.js"
export * from "./unavailable.js"
export { isForeignKeyViolation, isUniqueViolation, sqlStateOf } from "./sqlState.js"
