/** Session bearers (DESIGN §12): 256 random bits, kept by the service only as a SHA-256 digest. */
import { createHash, randomBytes } from "node:crypto"

/** The prefix makes a leaked bearer recognizable to secret scanners. */
export const BEARER_PREFIX = "svcrs_"

export const newBearer = (): string => `${BEARER_PREFIX}${randomBytes(32).toString("base64url")}`

export const digestOf = (text: string): string => createHash("sha256").update(text).digest("hex")
