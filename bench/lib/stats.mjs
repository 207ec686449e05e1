// Small statistics helpers.
export function quantile(values, q) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const pos = (v.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}
export const median = (values) => quantile(values, 0.5);
export const min = (values) => Math.min(...values);
export const max = (values) => Math.max(...values);
/** Median with its min–max spread across rounds. */
export const summary = (values) => ({ median: median(values), min: min(values), max: max(values), n: values.length });
