/**
 * The console's build (DESIGN §16). Served by the API at /console/ under a CSP without
 * 'unsafe-inline': nothing may be emitted inline, so the module-preload polyfill (an inline
 * script) is off and no asset is inlined into HTML.
 */
import react from "@vitejs/plugin-react"
import { defineConfig } from "vite"

export default defineConfig({
  base: "/console/",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    chunkSizeWarningLimit: 1024
  }
})
