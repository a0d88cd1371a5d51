import type { Schema } from '../api/schema';
import { isObject } from '../api/types';
import { canonicalQuantity } from './quantity';

/**
 * Rewrites every valid quantity (string or JSON number) that the schema marks as 'quantity' into
 * its canonical string, in place, as upstream's Quantity round-trip does ("1024Mi" -> "1Gi",
 * 0.5 -> "500m"). Invalid values are left alone for schema validation to report.
 */
export function canonicalizeQuantities(schema: Schema, value: unknown): void {
  if (schema.type === 'object' && isObject(value)) {
    for (const [k, sub] of Object.entries(schema.properties)) {
      // Absent fields stay absent (a quantity property set to undefined would show up in deep comparisons).
      if (!(k in value)) continue;
      if (sub.type === 'quantity') value[k] = canonical(value[k]);
      else canonicalizeQuantities(sub, value[k]);
    }
  } else if (schema.type === 'map' && isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (schema.values.type === 'quantity') value[k] = canonical(v);
      else canonicalizeQuantities(schema.values, v);
    }
  } else if (schema.type === 'array' && Array.isArray(value)) {
    value.forEach((item, i) => {
      if (schema.items.type === 'quantity') value[i] = canonical(item);
      else canonicalizeQuantities(schema.items, item);
    });
  }
}

function canonical(v: unknown): unknown {
  if (typeof v !== 'string' && typeof v !== 'number') return v;
  return canonicalQuantity(v) ?? v;
}
