/**
 * A minimal metrics registry rendering the Prometheus text format (0.0.4): gauges and counters
 * with labels, enough for the authentication metrics (5.3's reload timestamp). The lead serves
 * render() at /metrics; a fuller registry can replace it behind the same two methods.
 */

type Labels = Readonly<Record<string, string>>;

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k].replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');
}

abstract class Metric {
  protected readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'gauge' | 'counter',
  ) {}

  /** The current value for these labels (0 when never set). */
  value(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`);
    return lines.join('\n') + '\n';
  }
}

export class Gauge extends Metric {
  constructor(name: string, help: string) {
    super(name, help, 'gauge');
  }
  /** Sets the value for these labels. */
  set(labels: Labels, v: number): void {
    this.values.set(labelKey(labels), v);
  }
}

export class Counter extends Metric {
  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }
  /** Adds to the value for these labels. */
  inc(labels: Labels = {}, by = 1): void {
    const k = labelKey(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  /** Returns the gauge of this name, creating it once. */
  gauge(name: string, help: string): Gauge {
    return this.get(name, () => new Gauge(name, help), Gauge);
  }

  /** Returns the counter of this name, creating it once. */
  counter(name: string, help: string): Counter {
    return this.get(name, () => new Counter(name, help), Counter);
  }

  /** Every metric in the text exposition format. */
  render(): string {
    return [...this.metrics.values()].map((m) => m.render()).join('');
  }

  private get<T extends Metric>(name: string, make: () => T, cls: abstract new (...a: never[]) => T): T {
    const m = this.metrics.get(name);
    if (m) {
      if (!(m instanceof cls)) throw new Error(`metric ${name} registered with another type`);
      return m;
    }
    const n = make();
    this.metrics.set(name, n);
    return n;
  }
}
