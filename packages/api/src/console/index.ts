/** The browser console served at /console/ (DESIGN §16): docs/decisions/console.md. */
export { consoleDispatch, type ConsoleSettings } from "./dispatch.js"
export { CONTENT_SECURITY_POLICY } from "./headers.js"
export { defaultConsoleDir } from "./assets.js"
