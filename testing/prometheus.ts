/**
 * Scraping a process's Prometheus endpoint and reading it with a real exposition-format parser
 * (parse-prometheus-text-format, prom2json's output shape).
 */
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from "parse-prometheus-text-format"

export interface Scrape {
  readonly status: number
  readonly contentType: string | null
  readonly text: string
  readonly families: ReadonlyArray<PrometheusFamily>
}

export const scrape = async (url: string): Promise<Scrape> => {
  const response = await fetch(url)
  const text = await response.text()
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    text,
    families: response.status === 200 ? parsePrometheusTextFormat(text) : []
  }
}

export const family = (scraped: Scrape, name: string): PrometheusFamily | undefined =>
  scraped.families.find((f) => f.name === name)

const matches = (sample: PrometheusSample, labels: Readonly<Record<string, string>>): boolean =>
  Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value)

/** The samples of a family whose labels include these. */
export const samples = (scraped: Scrape, name: string, labels: Readonly<Record<string, string>> = {}) =>
  (family(scraped, name)?.metrics ?? []).filter((sample) => matches(sample, labels))

/** A counter's or gauge's value for exactly one label set (0 when absent, as Prometheus reads it). */
export const value = (scraped: Scrape, name: string, labels: Readonly<Record<string, string>>): number => {
  const found = samples(scraped, name, labels)
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} series`)
  return found.length === 0 ? 0 : Number(found[0]!.value)
}

/** A histogram's sample count for exactly one label set (0 when absent). */
export const histogramCount = (scraped: Scrape, name: string, labels: Readonly<Record<string, string>>): number => {
  const found = samples(scraped, name, labels)
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} series`)
  return found.length === 0 ? 0 : Number(found[0]!.count)
}
