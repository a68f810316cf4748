#!/usr/bin/env node
// Writes the OpenAPI 3.1.0 document of the service, generated from its HttpApi definition.
// Usage: npm run openapi [-- <output path>]   (default: openapi.json in the repository root)
import { SvcApi } from "@svc/api"
import { openApiDocument } from "@svc/core/http"
import * as fs from "node:fs"
import * as path from "node:path"

const output = path.resolve(process.argv[2] ?? "openapi.json")
fs.writeFileSync(output, JSON.stringify(openApiDocument(SvcApi), null, 2) + "\n")
console.log(`wrote ${output}`)
