/**
 * Trusted encoding and decoding (issue 11, item 3): a schema's own shape without Effect's
 * per-value validation, for values the service produced itself.
 *
 * `Schema.encode` validates both sides of every value it writes: each branded id's pattern on
 * the Type side, each `Timestamp`'s pattern and `Date.parse` on the encoded side, each member
 * of each struct through the generic `ParseResult` interpreter. For a list page built from our
 * own rows that is most of the page's CPU. `compile` walks a schema's AST once and returns a
 * plain function that produces exactly what Effect's interpreter produces for a valid value
 * (the same keys in the same order, excess keys dropped, optional keys skipped, the same
 * transformations), minus the checks:
 *
 * - `encode` trusts the value entirely (it is the handler's typed result);
 * - `decode` (our database rows) still checks what a column's type does not pin down (strings,
 *   numbers, literals, nulls, dates, records), but does not re-run refinements (id patterns,
 *   lengths) on values this service wrote.
 *
 * Whatever the fast path cannot answer exactly (an effectful transformation, a failed check, a
 * union it cannot resolve by the value's kind, parse-option annotations) is left to Effect: the
 * node is run by Effect's own interpreter, or the whole value is, so errors are Effect's own.
 */
import { Effect, Either, Option, ParseResult, Predicate, Schema, SchemaAST as AST } from "effect"

type Mode = "encode" | "decode"
type Run = (input: unknown) => unknown
/** The kinds of JavaScript value a node can accept, for picking a union's member. */
type Kind = "primitive" | "array" | "record" | "any"

interface Compiled {
  readonly run: Run
  /** Its output is its input (after `check`, when decoding). */
  readonly identity: boolean
  /** For identity nodes when decoding: whether the input is accepted. */
  readonly check: (input: unknown) => boolean
}

/** Thrown inside a compiled function: Effect's interpreter answers instead. */
const fallback: unique symbol = Symbol("svc/trusted/fallback")
const giveUp = (): never => {
  throw fallback
}

const hasOwn = (input: object, key: PropertyKey) => Object.prototype.hasOwnProperty.call(input, key)
const always = () => true

const identity = (check: (input: unknown) => boolean, mode: Mode): Compiled => ({
  identity: true,
  check,
  run: mode === "encode" ? (input) => input : (input) => (check(input) ? input : giveUp())
})

const computed = (run: Run): Compiled => ({ identity: false, check: always, run })

/**
 * How the fast path calls into Effect: effects allowed, so a node that is effectful anywhere
 * answers with an Effect rather than forcing it, and the fast path gives the whole value to
 * Effect (which orders such properties its own way). `isEffectAllowed` is Effect's internal option.
 */
const effectsAllowed = { isEffectAllowed: true } as AST.ParseOptions

/** The node run by Effect's own interpreter: exact, with its checks. */
const delegate = (ast: AST.AST, mode: Mode): Compiled => {
  const schema = Schema.make(ast)
  const parse = mode === "encode" ? ParseResult.encodeUnknownEither(schema) : ParseResult.decodeUnknownEither(schema)
  return computed((input) => rightOf(parse(input, effectsAllowed)))
}

/** An `Either` answer of a transformation or declaration, or the fall-back. */
const rightOf = (result: unknown): unknown =>
  Either.isEither(result) && Either.isRight(result) ? result.right : giveUp()

const kindOf = (input: unknown): Kind | undefined =>
  Array.isArray(input) ? "array" : Predicate.isRecord(input) ? "record" : typeof input === "function" ? undefined : "primitive"

/** What a node accepts (the side it checks first: Type when encoding, encoded when decoding). */
const accepts = (ast: AST.AST, mode: Mode, seen: Set<AST.AST> = new Set()): ReadonlySet<Kind> => {
  if (seen.has(ast)) return new Set(["any"])
  seen.add(ast)
  switch (ast._tag) {
    case "TupleType":
      return new Set(["array"])
    case "TypeLiteral":
      return new Set([ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0 ? "any" : "record"])
    case "Union":
      return new Set(ast.types.flatMap((member) => [...accepts(member, mode, seen)]))
    case "Refinement":
      return accepts(ast.from, mode, seen)
    case "Transformation":
      return accepts(mode === "encode" ? ast.to : ast.from, mode, seen)
    case "Suspend":
      return accepts(ast.f(), mode, seen)
    case "NeverKeyword":
      return new Set()
    case "UnknownKeyword":
    case "AnyKeyword":
    case "VoidKeyword":
    case "ObjectKeyword":
    case "Declaration":
      return new Set(["any"])
    default:
      return new Set(["primitive"])
  }
}

const memo: Record<Mode, WeakMap<AST.AST, Compiled>> = { encode: new WeakMap(), decode: new WeakMap() }

/** `ast` compiled for `mode`, once. */
export const compile = (ast: AST.AST, mode: Mode): Compiled => {
  const known = memo[mode].get(ast)
  if (known) return known
  const compiled = Option.isSome(AST.getParseOptionsAnnotation(ast)) ||
      (mode === "decode" && Option.isSome(AST.getDecodingFallbackAnnotation(ast)))
    ? delegate(ast, mode)
    : build(ast, mode)
  memo[mode].set(ast, compiled)
  return compiled
}

const build = (ast: AST.AST, mode: Mode): Compiled => {
  switch (ast._tag) {
    case "Literal":
      return identity((input) => input === ast.literal, mode)
    case "StringKeyword":
      return identity(Predicate.isString, mode)
    case "NumberKeyword":
      return identity(Predicate.isNumber, mode)
    case "BooleanKeyword":
      return identity(Predicate.isBoolean, mode)
    case "UndefinedKeyword":
      return identity(Predicate.isUndefined, mode)
    case "UnknownKeyword":
    case "AnyKeyword":
    case "VoidKeyword":
      return identity(always, mode)
    case "NeverKeyword":
    case "UniqueSymbol":
    case "SymbolKeyword":
    case "BigIntKeyword":
    case "ObjectKeyword":
    case "Enums":
    case "TemplateLiteral":
      return identity(Schema.is(Schema.make(ast)), mode)
    case "Refinement":
      // The refinement's own predicate is what we trust; its base is still compiled.
      return compile(ast.from, mode)
    case "Suspend": {
      let target: Compiled | undefined
      return computed((input) => (target ??= compile(ast.f(), mode)).run(input))
    }
    case "Declaration": {
      const parse = mode === "encode" ? ast.encodeUnknown(...ast.typeParameters) : ast.decodeUnknown(...ast.typeParameters)
      return computed((input) => rightOf(parse(input, effectsAllowed, ast)))
    }
    case "Transformation":
      return transformation(ast, mode)
    case "TupleType":
      return tuple(ast, mode)
    case "TypeLiteral":
      return typeLiteral(ast, mode)
    case "Union":
      return union(ast, mode)
  }
}

const transformation = (ast: AST.Transformation, mode: Mode): Compiled => {
  // Encoding runs the Type side, the transformation backwards, then the encoded side.
  const first = compile(mode === "encode" ? ast.to : ast.from, mode)
  const last = compile(mode === "encode" ? ast.from : ast.to, mode)
  const step = transformationStep(ast, mode)
  return computed((input) => last.run(step(first.run(input), input)))
}

const transformationStep = (ast: AST.Transformation, mode: Mode): (value: unknown, input: unknown) => unknown => {
  const t = ast.transformation
  switch (t._tag) {
    case "FinalTransformation": {
      const f = mode === "encode" ? t.encode : t.decode
      return (value, input) => rightOf(f(value, effectsAllowed, ast, input))
    }
    case "ComposeTransformation":
      return (value) => value
    case "TypeLiteralTransformation":
      // As Effect does: each property's transformation in order, moving the key to the end.
      return (value) => {
        const out: Record<PropertyKey, unknown> = { ...(value as Record<PropertyKey, unknown>) }
        for (const p of t.propertySignatureTransformations) {
          const [from, to, f] = mode === "encode" ? [p.to, p.from, p.encode] : [p.from, p.to, p.decode]
          const result = f(hasOwn(out, from) ? Option.some(out[from]) : Option.none())
          delete out[from]
          if (Option.isSome(result)) out[to] = result.value
        }
        return out
      }
  }
}

const tuple = (ast: AST.TupleType, mode: Mode): Compiled => {
  const elements = ast.elements.map((element) => ({ optional: element.isOptional, compiled: compile(element.type, mode) }))
  const [head, ...tail] = ast.rest.map((rest) => compile(rest.type, mode))
  const required = ast.elements.filter((element) => !element.isOptional).length + Math.max(0, ast.rest.length - 1)
  if (elements.length === 0 && head !== undefined && tail.length === 0) {
    if (head.identity) return identity((input) => Array.isArray(input) && input.every(head.check), mode)
    return computed((input) => (Array.isArray(input) ? input.map((item) => head.run(item)) : giveUp()))
  }
  return computed((input) => {
    if (!Array.isArray(input) || input.length < required) return giveUp()
    if (head === undefined && input.length > elements.length) return giveUp()
    const out: Array<unknown> = []
    let i = 0
    for (; i < elements.length; i++) {
      if (i < input.length) out.push(elements[i]!.compiled.run(input[i]))
      else if (!elements[i]!.optional) return giveUp()
    }
    if (head !== undefined) {
      for (; i < input.length - tail.length; i++) out.push(head.run(input[i]))
      tail.forEach((t, j) => {
        if (i + j < input.length) out.push(t.run(input[i + j]))
      })
    }
    return out
  })
}

const typeLiteral = (ast: AST.TypeLiteral, mode: Mode): Compiled => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) return identity(Predicate.isNotNullable, mode)
  // Symbol keys and refined key schemas are rare: Effect's interpreter handles those literals.
  if (ast.indexSignatures.some((signature) => signature.parameter._tag !== "StringKeyword")) return delegate(ast, mode)
  const properties = ast.propertySignatures.map((p) => ({ name: p.name, optional: p.isOptional, compiled: compile(p.type, mode) }))
  const expected: Record<PropertyKey, null> = {}
  for (const p of properties) expected[p.name] = null
  const values = ast.indexSignatures.map((signature) => compile(signature.type, mode))
  return computed((input) => {
    if (!Predicate.isRecord(input)) return giveUp()
    // Assigned in Effect's order: the declared properties, then each index signature's keys.
    const out: Record<PropertyKey, unknown> = {}
    for (const p of properties) {
      if (!hasOwn(input, p.name) && p.optional) continue
      out[p.name] = p.compiled.run(input[p.name])
    }
    for (const value of values) {
      for (const key of Object.keys(input)) {
        if (!hasOwn(expected, key)) out[key] = value.run(input[key])
        else if (mode === "decode") value.run(input[key])
      }
    }
    return out
  })
}

const union = (ast: AST.Union, mode: Mode): Compiled => {
  const members = ast.types.map((member) => ({ ast: member, compiled: compile(member, mode) }))
  if (members.every((m) => m.compiled.identity)) {
    return identity((input) => members.some((m) => m.compiled.check(input)), mode)
  }
  const effect = delegate(ast, mode)
  // The members that could take each kind of value (resolved on first use: members may be lazy).
  let byKind: Record<Kind, ReadonlyArray<Compiled>> | undefined
  const candidates = (kind: Kind) => {
    byKind ??= (["primitive", "array", "record", "any"] as const).reduce(
      (table, k) => ({ ...table, [k]: members.filter((m) => { const a = accepts(m.ast, mode); return a.has(k) || a.has("any") }).map((m) => m.compiled) }),
      {} as Record<Kind, ReadonlyArray<Compiled>>
    )
    return byKind[kind]
  }
  return computed((input) => {
    const kind = kindOf(input)
    if (kind === undefined) return effect.run(input)
    const fits = candidates(kind)
    // Only one member can take this kind of value: it is the one Effect would pick.
    if (fits.length === 1) return fits[0]!.run(input)
    if (fits.length > 1 && fits.every((m) => m.identity)) {
      return mode === "encode" || fits.some((m) => m.check(input)) ? input : giveUp()
    }
    return effect.run(input)
  })
}

/** `compiled`'s answer, or `orElse` (Effect's own) when the fast path gives up. */
const attempt = <T>(compiled: Compiled, input: unknown, wrap: (value: unknown) => T, orElse: () => T): T => {
  let value: unknown
  try {
    value = compiled.run(input)
  } catch (error) {
    if (error === fallback) return orElse()
    throw error
  }
  return wrap(value)
}

/** Options under which Effect's output for a valid value is what `compile` produces. */
const isDefault = (options: AST.ParseOptions) =>
  (options.onExcessProperty ?? "ignore") === "ignore" && (options.propertyOrder ?? "none") === "none"

const declaration = (
  typeParameter: AST.AST,
  surrogate: AST.AST,
  encode: (parameter: AST.AST) => (input: unknown, options: AST.ParseOptions) => Effect.Effect<unknown, ParseResult.ParseIssue>
) =>
  new AST.Declaration(
    [typeParameter],
    // The type parameter's own parser with the caller's options: what Effect would run in its place.
    (parameter) => {
      const parse = ParseResult.decodeUnknownEither(Schema.make(parameter))
      return (input, options) => parse(input, options)
    },
    encode,
    // Its JSON Schema is the surrogate's; its title keeps error messages as they were.
    { [AST.SurrogateAnnotationId]: surrogate, [AST.TitleAnnotationId]: String(typeParameter) }
  )

/**
 * `schema` as it is on the wire and in the OpenAPI document (a surrogate: the same JSON Schema),
 * decoded by Effect in full (a client reading a response), encoded by `compile`: for values
 * the service built itself (a list page from its own rows). Non-default parse options, or a
 * value the fast path cannot answer exactly, are encoded by Effect.
 */
export const trustedEncoding = <A, I>(schema: Schema.Schema<A, I>): Schema.Schema<A, I> =>
  Schema.make(
    declaration(schema.ast, schema.ast, (parameter) => {
      const compiled = compile(parameter, "encode")
      const full = ParseResult.encodeUnknownEither(Schema.make(parameter))
      return (input, options) =>
        isDefault(options) ? attempt(compiled, input, ParseResult.succeed, () => full(input, options)) : full(input, options)
    })
  )

/**
 * `Schema.typeSchema(schema)` whose encode passes the value through (it is checked and encoded
 * where it is encoded for the wire, e.g. by `trustedEncoding`); its decode is Effect's.
 */
export const trustedType = <A, I>(schema: Schema.Schema<A, I>): Schema.Schema<A> => {
  const type = AST.typeAST(schema.ast)
  return Schema.make(declaration(type, type, () => (input) => ParseResult.succeed(input)))
}

/**
 * A decoder of rows this service wrote (`compile`'s `decode`): the columns' types and literals
 * are checked, refinements are not re-run; a value that fails is decoded by Effect, whose error
 * is the answer.
 */
export const trustedDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const compiled = compile(schema.ast, "decode")
  const full = Schema.decodeUnknown(schema)
  return (input: unknown): Effect.Effect<A, ParseResult.ParseError> =>
    attempt(compiled, input, (value) => Effect.succeed(value as A), () => full(input))
}
