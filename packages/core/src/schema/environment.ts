/**
 * Destination environment variables of Secret bindings (SPEC 2.8). A binding delivers a Secret
 * into an Agent gateway's process environment under a name the caller picks, and every process
 * the gateway starts inherits it; names that steer a process (its loader, C library, shell,
 * interpreter, network path, cluster client), or that belong to us, the runtime or a model
 * provider, are refused at admission so a binding can never redirect execution, traffic or model
 * authentication.
 *
 * The list is matched case-insensitively: the runtime and many libraries read both spellings
 * (`https_proxy` and `HTTPS_PROXY`).
 */
import { Schema } from "effect"
import { detailMessage } from "./detailCodes.js"
import { KeyedRecord } from "./records.js"

/** Exact names that control the process, its loader, its shell or its network path. */
export const ReservedEnvironmentNames: ReadonlyArray<string> = [
  // Process and shell control
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "TMPDIR", "TMP", "TEMP", "IFS", "ENV",
  "BASH_ENV", "PS4", "PROMPT_COMMAND", "TERM", "TZ", "LANG", "LANGUAGE", "EDITOR", "VISUAL", "PAGER",
  "DISPLAY", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
  "PS1", "PS2", "PS3", "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "HISTFILE", "INPUTRC", "ZDOTDIR",
  "BROWSER", "LESSOPEN", "LESSCLOSE", "MANPAGER", "TERMINFO", "TERMINFO_DIRS", "DBUS_SESSION_BUS_ADDRESS",
  // The C library: what glibc itself ignores in setuid programs, for the same reason
  "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "NIS_PATH", "TZDIR",
  "HOSTALIASES", "RESOLV_HOST_CONF", "LOCALDOMAIN", "RES_OPTIONS",
  // Interpreters and virtual machines the gateway's tools may start: code to load or run at start-up
  "PERLLIB", "PERLIO", "PERLIO_DEBUG", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
  "PHPRC", "PHP_INI_SCAN_DIR", "TCLLIBPATH", "VIRTUAL_ENV", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY",
  "RUSTC_WRAPPER", "RUSTFLAGS",
  // Network path and trust
  "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "FTP_PROXY", "GLOBAL_AGENT_HTTP_PROXY",
  "SOCKS_PROXY", "SOCKS5_PROXY", "RSYNC_PROXY",
  "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSLKEYLOGFILE",
  "CURL_HOME", "WGETRC", "NETRC", "KRB5CCNAME", "KUBECONFIG", "CONTAINER_HOST",
  // Our own process settings and telemetry the embedding sets; the `api_key` harness Secret
  "DATABASE_URL", "DO_NOT_TRACK", "MODEL_API_KEY"
]

/** Prefixes owned by the service, the runtime, the loader, tool chains and model providers. */
export const ReservedEnvironmentPrefixes: ReadonlyArray<string> = [
  // The service
  "SVC_", "OTEL_",
  // The runtime (OpenClaw gateway on Node.js) and its package manager
  "OPENCLAW_", "CLAWDBOT_", "NODE_", "NPM_", "NPM_CONFIG_", "COREPACK_", "UV_",
  // Dynamic loaders, the C library's allocator, locale categories
  "LD_", "DYLD_", "MALLOC_", "LC_",
  // Shells and desktop directories
  "BASH_", "XDG_",
  // Interpreters and package managers (PYTHON: PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, PYTHON_*, ...)
  "PYTHON", "PIP_", "PERL5", "PERL_", "RUBY", "GEM_", "BUNDLE_", "JAVA_", "LUA_", "YARN_", "PNPM_", "BUN_", "DENO_", "CARGO_",
  // TLS, Kerberos and RPC libraries, which load modules or trust roots from these
  "OPENSSL_", "KRB5_", "GRPC_",
  // Orchestrators and container engines: which cluster or daemon a client talks to
  "KUBERNETES_", "DOCKER_",
  // Browsers the gateway may drive
  "PLAYWRIGHT_", "PUPPETEER_",
  // Tools the gateway may start (git, ssh), which follow these to run programs or reach hosts
  "GIT_", "SSH_", "GH_", "GITHUB_",
  // Model providers: model authentication belongs to `harnessAuth` (SPEC 2.8)
  "OPENAI_", "AZURE_OPENAI_", "ANTHROPIC_", "CLAUDE_", "GEMINI_", "GOOGLE_", "VERTEX_", "AWS_", "BEDROCK_",
  "MISTRAL_", "GROQ_", "OPENROUTER_", "XAI_", "DEEPSEEK_", "TOGETHER_", "FIREWORKS_", "COHERE_", "PERPLEXITY_",
  "OLLAMA_", "HF_", "HUGGINGFACE_", "MOONSHOT_", "MINIMAX_", "ZAI_", "QWEN_", "DASHSCOPE_", "CEREBRAS_",
  "VENICE_", "LITELLM_", "COPILOT_"
]

/** Why `name` may not be a binding destination, or undefined when it may. */
export const reservedEnvironmentName = (name: string): string | undefined => {
  const upper = name.toUpperCase()
  if (ReservedEnvironmentNames.includes(upper)) return `${upper} is reserved`
  const prefix = ReservedEnvironmentPrefixes.find((p) => upper.startsWith(p))
  return prefix === undefined ? undefined : `names starting with ${prefix} are reserved`
}

export const ENVIRONMENT_NAME_MAX = 128
const ENVIRONMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * What is wrong with `name` as a destination environment variable, as a detail message
 * (`CODE: text`), or undefined: a POSIX-portable name of 1-128 characters (TOO_LONG,
 * INVALID_FORMAT) that is not reserved (INVALID_VALUE).
 */
export const environmentNameProblem = (name: string): string | undefined => {
  if (name.length > ENVIRONMENT_NAME_MAX) return detailMessage("TOO_LONG", `must be at most ${ENVIRONMENT_NAME_MAX} characters`)()
  if (!ENVIRONMENT_NAME.test(name)) return detailMessage("INVALID_FORMAT", "must be an environment variable name")()
  const reserved = reservedEnvironmentName(name)
  return reserved === undefined ? undefined : detailMessage("INVALID_VALUE", reserved)()
}

/** A destination environment variable name (SPEC 2.8), with the problem as its detail message. */
export const EnvironmentName = Schema.String.pipe(
  Schema.filter((name) => environmentNameProblem(name) ?? true)
).annotations({ description: "An environment variable name that is not reserved" })

/** A map keyed by destination environment variable names, each name checked at its own pointer. */
export const EnvironmentRecord = <V extends Schema.Schema.Any>(value: V) => KeyedRecord(EnvironmentName, value)
