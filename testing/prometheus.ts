/**
 * Scraping a process's Prometheus endpoint and reading it with a real exposition-format parser
 * (parse-prometheus-text-format, prom2json's output shape).
 *
 * That parser folds every series of a histogram family into one object and drops the labels of
 * `_sum` and `_count` (it only handles unlabelled histograms). So the text is parsed twice: as
 * is, for the families and their TYPE; and with the HELP/TYPE/UNIT lines of histogram families
 * left out, which makes the parser read each `_bucket`, `_sum` and `_count` line as a plain
 * sample with all its labels.
 */
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from "parse-prometheus-text-format"

export interface Scrape {
  readonly status: number
  readonly contentType: string | null
  readonly text: string
  readonly families: ReadonlyArray<PrometheusFamily>
  /** The histogram families' `_bucket`, `_sum` and `_count` samples, labels kept. */
  readonly histogramSeries: ReadonlyArray<PrometheusFamily>
}

const histogramNames = (text: string): Set<string> =>
  new Set(text.split("\n").flatMap((line) => /^# TYPE (\S+) histogram$/.exec(line)?.slice(1, 2) ?? []))

const withoutHistogramMetadata = (text: string, names: Set<string>): string =>
  text
    .split("\n")
    .filter((line) => {
      const name = /^# (?:HELP|TYPE|UNIT) (\S+)/.exec(line)?.[1]
      return name === undefined || !names.has(name)
    })
    .join("\n")

export const scrape = async (url: string): Promise<Scrape> => {
  const response = await fetch(url)
  const text = await response.text()
  const parsed = response.status === 200
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    text,
    families: parsed ? parsePrometheusTextFormat(text) : [],
    histogramSeries: parsed ? parsePrometheusTextFormat(withoutHistogramMetadata(text, histogramNames(text))) : []
  }
}

export const family = (scraped: Scrape, name: string): PrometheusFamily | undefined =>
  scraped.families.find((f) => f.name === name)

const matches = (sample: PrometheusSample, labels: Readonly<Record<string, string>>): boolean =>
  Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value)

const select = (families: ReadonlyArray<PrometheusFamily>, name: string, labels: Readonly<Record<string, string>>) =>
  families.filter((f) => f.name === name).flatMap((f) => f.metrics.filter((sample) => matches(sample, labels)))

const single = (found: ReadonlyArray<PrometheusSample>, name: string, labels: Readonly<Record<string, string>>) => {
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} series`)
  return found.length === 0 ? 0 : Number(found[0]!.value)
}

/** The samples of a counter or gauge family whose labels include these. */
export const samples = (scraped: Scrape, name: string, labels: Readonly<Record<string, string>> = {}) =>
  select(scraped.families, name, labels)

/** A counter's or gauge's value for exactly one label set (0 when absent, as Prometheus reads it). */
export const value = (scraped: Scrape, name: string, labels: Readonly<Record<string, string>>): number =>
  single(samples(scraped, name, labels), name, labels)

/** A histogram's sample count (`<name>_count`) for exactly one label set (0 when absent). */
export const histogramCount = (scraped: Scrape, name: string, labels: Readonly<Record<string, string>>): number =>
  single(select(scraped.histogramSeries, `${name}_count`, labels), `${name}_count`, labels)

/** A histogram's cumulative bucket counts, `[le, count]` in the order sent, for one label set. */
export const histogramBuckets = (
  scraped: Scrape,
  name: string,
  labels: Readonly<Record<string, string>>
): ReadonlyArray<readonly [string, number]> =>
  select(scraped.histogramSeries, `${name}_bucket`, labels).map((sample) => [sample.labels?.le ?? "", Number(sample.value)])
