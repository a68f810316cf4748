import * as crypto from "node:crypto"

/**
 * Credentials are 32 random bytes; only their SHA-256 digest is stored. The prefix tells an
 * operator what a leaked string is (and lets secret scanners find it).
 */
export const newToken = (prefix: "svck" | "svcs"): string => `${prefix}_${crypto.randomBytes(32).toString("base64url")}`

export const digestOf = (token: string): Buffer => crypto.createHash("sha256").update(token, "utf8").digest()

/** A non-credential identifier: 43 characters of `[A-Za-z0-9_-]` (SPEC 4.1 attempt ids, session keys). */
export const newOpaqueId = (): string => crypto.randomBytes(32).toString("base64url")
