#!/usr/bin/env node
// The `svc` command: one entry point for every process of the service (DESIGN §3).
// The packages must be built first (`npm run build`; `npm start` does it for you).
import { pathToFileURL } from "node:url"
import { bundles, entryFile, isFresh, processEntries } from "./lib/bundles.mjs"

const commands = {
  start: "all-in-one development mode: embedded PostgreSQL unless DATABASE_URL, migrate, bootstrap, API + worker",
  migrate: "apply pending database migrations and exit",
  bootstrap: "create the Installation once (after migrate): first administrators, default Namespace, bootstrap key",
  api: "serve the HTTP API (one replica)",
  worker: "run the durable work engine (one replica)",
  "credential-service": "run the credential service",
  harness: "dedicated execution's model credential proxy (the harness container; configured by SVC_HARNESS_*)",
  "gateway-pairing": "approves the service's device on the Pod's gateway (the pairing container; configured by SVC_PAIRING_*)",
  "runtime install": "install the local gateway runtime (pinned Node.js 24 + openclaw) under SVC_RUNTIME_DIR; no-op when present"
}

/**
 * The module a command runs: from its bundle (scripts/bundle.mjs) while that matches the compiled
 * packages, else the package itself (after a bare `tsc -b`, say), which is slower to load but
 * the same code.
 */
const loadEntry = (bundle, name, specifier) =>
  isFresh(bundle, { dependencies: false }) ? import(pathToFileURL(entryFile(bundle, name)).href) : import(specifier)

// Client commands (login, ns, agents, deploy, ...) live in @svc/cli and talk to a running service.
// They load from its one-file bundle: a command starts in well under a second instead of two.
const clientCommands = async () => {
  try {
    return await loadEntry(bundles.cli, "main", "@svc/cli/main")
  } catch (error) {
    if (error?.code === "ERR_MODULE_NOT_FOUND") return undefined
    throw error
  }
}

const AUDIT_EXPORT_HELP = "write the audit trail as JSON Lines: --since <ts> [--ns <ns>] [--url ..] [--key-file ..]"

const usage = (cli) =>
  [
    "usage: svc <command>",
    "",
    "process commands (configuration is read from the environment; see README.md):",
    ...Object.entries(commands).map(([name, help]) => `  ${name.padEnd(20)} ${help}`),
    "",
    cli === undefined ? "client commands: run `npm run build` to list them" : cli.clientUsage(),
    "",
    "audit export (its own flags and exit codes, see README.md):",
    `  ${"audit export".padEnd(20)} ${AUDIT_EXPORT_HELP}`
  ].join("\n")

const argv = process.argv.slice(2)
if (argv[0] === "audit" && argv[1] === "export") {
  const { auditExport } = await loadEntry(bundles.server, "audit-export", processEntries["audit-export"])
  process.exit(await auditExport(argv.slice(2)))
}
// A process command (`svc start`, `svc worker`, ...) starts without loading the client code.
const processWords = new Set(Object.keys(commands).map((name) => name.split(" ")[0]))
const cli = processWords.has(argv[0]) ? undefined : await clientCommands()
if (cli !== undefined && argv.length > 0 && cli.isClientCommand(argv[0])) {
  process.exitCode = await cli.main(argv)
  process.exit()
}
// Two-word commands (`svc runtime install`) are looked up as one name.
const twoWords = argv.length >= 2 ? `${argv[0]} ${argv[1]}` : undefined
const [command, ...rest] = twoWords !== undefined && twoWords in commands ? [twoWords, ...argv.slice(2)] : argv
if (command === undefined || command === "help" || command === "--help" || command === "-h") {
  console.log(usage(cli ?? (await clientCommands())))
  process.exit(command === undefined ? 64 : 0)
}
if (!(command in commands)) {
  console.error(`svc: unknown command "${command}"\n\n${usage(cli ?? (await clientCommands()))}`)
  process.exit(64)
}
if (rest.length > 0) {
  console.error(`svc ${command}: takes no arguments (configuration comes from the environment)`)
  process.exit(64)
}
const name = command.replace(" ", "-")
try {
  await loadEntry(bundles.server, name, processEntries[name])
} catch (error) {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("/dist/")) {
    console.error("svc: the packages are not built; run `npm run build` first")
    process.exit(1)
  }
  throw error
}
