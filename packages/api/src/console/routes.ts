/**
 * Which paths under /console/ are pages of the console (answered with index.html, the SPA
 * decides) and which are files. Keep in step with packages/console/src/routes.tsx. Anything
 * else, a mistyped asset above all, is a 404 in the envelope, never a page that would load as
 * a script.
 */
const PAGE_ROUTES: ReadonlyArray<RegExp> = [
  /^$/,
  /^sign-in$/,
  /^namespaces$/,
  /^ns\/[^/]+(\/[^/]+)*$/,
  /^admin\/[^/]+(\/[^/]+)*$/
]

/** `relative` is the path below `/console/`, without the leading slash. */
export const isConsolePage = (relative: string): boolean =>
  // A dot in the last segment names a file, never a page.
  !/\.[^/]*$/.test(relative) && PAGE_ROUTES.some((route) => route.test(relative))

/** Hashed build output: its name changes with its content, so it may be cached for good. */
export const isImmutableAsset = (relative: string): boolean => /^assets\/.+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/.test(relative)
