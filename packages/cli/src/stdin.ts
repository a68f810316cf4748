/** Reading a secret from standard input: piped (`--key -`, `--password-stdin`) or typed unechoed. */
import { Effect } from "effect"
import { UsageError } from "./failures.js"

/** All of stdin, without the final line break. */
export const readStdin: Effect.Effect<string, UsageError> = Effect.tryPromise({
  try: async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
    return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "")
  },
  catch: () => new UsageError({ message: "standard input cannot be read" })
})

/** A line typed on the terminal without echo (raw mode); Ctrl-C aborts. */
export const promptHidden = (question: string): Effect.Effect<string, UsageError> =>
  Effect.async<string, UsageError>((resume) => {
    const stdin = process.stdin
    process.stderr.write(question)
    let typed = ""
    const done = (result: Effect.Effect<string, UsageError>) => {
      stdin.setRawMode(false)
      stdin.pause()
      stdin.off("data", onData)
      process.stderr.write("\n")
      resume(result)
    }
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n") return done(Effect.succeed(typed))
        if (char === "\u0003") return done(Effect.fail(new UsageError({ message: "aborted" })))
        if (char === "\u007f" || char === "\b") typed = typed.slice(0, -1)
        else typed += char
      }
    }
    stdin.setRawMode(true)
    stdin.resume()
    stdin.on("data", onData)
  })
