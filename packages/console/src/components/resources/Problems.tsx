/**
 * A failed write: the code and message, and each `details[]` item at its JSON Pointer (SPEC
 * 7.1), so the person sees which field of the document is wrong.
 */
import { problemsOf } from "../../api/resources/checked.js"
import { ActionError } from "../States.js"

export const Problems = ({ error }: { error: unknown }) => {
  const problems = problemsOf(error)
  return (
    <>
      <ActionError error={error} />
      {problems.length > 0 && (
        <ul className="problems" aria-label="Problems">
          {problems.map((problem) => (
            <li key={problem.path} data-pointer={problem.path} data-code={problem.code}>
              <code>{problem.path === "" ? "/" : problem.path}</code> {problem.code}
            </li>
          ))}
        </ul>
      )}
    </>
  )
}
