/** The ServiceAccount Driver (DESIGN §13): the interface and the model vendor implementation. */
export * from "./driver.js"
export { MAX_ANSWER_BYTES } from "./adminApi.js"
export { CREDENTIAL_SCOPES, LIST_PAGE_SIZE, makeModelVendorDriver, MAX_LIST_PAGES, MODEL_VENDOR_ADMIN_ORIGIN, type ModelVendorSettings } from "./modelVendor.js"
export { ADMIN_API_TIMEOUT_MS, selectServiceAccountDriver } from "./select.js"
