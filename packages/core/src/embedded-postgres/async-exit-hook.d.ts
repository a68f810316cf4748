declare module "async-exit-hook" {
  interface ExitHook {
    (hook: (done?: () => void) => void): void
    hookedEvents(): Array<string>
    unhookEvent(event: string): void
  }
  const exitHook: ExitHook
  export default exitHook
}
