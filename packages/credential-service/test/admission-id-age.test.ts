/**
 * SPEC 4.8 and 8 "unseen admission ID under 60 s old": the exact edges of the rule the control
 * interface applies to an `X-Admission-Id` it has not seen (the real process's answers are in
 * control-sessions.test.ts).
 */
import { describe, expect, it } from "vitest"
import { unseenAdmissionIdProblem } from "../src/sessions/admissionId.js"

const NOW = Date.parse("2026-11-28T12:00:00.000Z")
const idAt = (ms: number) => `${ms}-0b6f4e52-7c4f-4d1e-9a59-2d3f3c1b2a10`

describe("unseen admission id age", () => {
  it("59.999 s old is admitted, 60 s old is stale, 1 ms ahead is future", () => {
    expect(unseenAdmissionIdProblem(idAt(NOW), NOW)).toBeUndefined()
    expect(unseenAdmissionIdProblem(idAt(NOW - 59_999), NOW)).toBeUndefined()
    expect(unseenAdmissionIdProblem(idAt(NOW - 60_000), NOW)).toBe("stale")
    expect(unseenAdmissionIdProblem(idAt(NOW + 1), NOW)).toBe("future")
  })
})
