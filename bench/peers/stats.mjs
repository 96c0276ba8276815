// stats.mjs — what the peers of `make bench` (bpmn/, dbos/) share: repetitions summed up as
// median / min / max, the process's CPU seconds, and the one JSON line per figure that
// scripts/bench.sh reads ({row, column, unit, median, min, max, repetitions}). bench.sh copies
// it beside each peer's bench.mjs.
export function summary(v) {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  const med = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return { median: med, min: s[0], max: s[n - 1], repetitions: n };
}

export function cpuSeconds() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

export function emit(row, column, unit, values) {
  console.log(JSON.stringify({ row, column, unit, ...summary(values) }));
}
