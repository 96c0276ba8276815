// bench.mjs — the DBOS peer of `make bench`: bench_persist's durable 5-step workload (five
// steps, a checkpoint after each) as a DBOS workflow of five DBOS.runStep calls (each step's
// output is checkpointed in PostgreSQL before the next runs; the workflow's start and end are
// recorded too), on the PostgreSQL that scripts/bench.sh starts for it (DBOS_SYSTEM_DATABASE_URL).
// Instances run `concurrency` at a time, like bench_persist's threads. Prints one JSON object per
// figure: {row, column, unit, median, min, max, repetitions}; the row names the database's
// synchronous_commit. Usage: node bench.mjs ROW [quick]
import { DBOS } from '@dbos-inc/dbos-sdk';
import { cpuSeconds, emit } from './stats.mjs';

const row = process.argv[2] || '5 steps, checkpoint after each';
const quick = process.argv[3] === 'quick';
const reps = quick ? 1 : 3;
const count = quick ? 20 : 600;
const concurrency = 8;

async function step(n) {
  return n + 1;
}

async function fiveSteps(n) {
  for (let i = 0; i < 5; i++) {
    const v = n;
    n = await DBOS.runStep(() => step(v), { name: `step${i}` });
  }
  return n;
}
const workflow = DBOS.registerWorkflow(fiveSteps, { name: 'fiveSteps' });

// `count` workflows, `concurrency` in flight; every result checked.
async function batch() {
  let next = 0;
  async function lane() {
    while (next < count) {
      next++;
      const r = await workflow(0);
      if (r !== 5) throw new Error(`workflow returned ${r}, not 5`);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
}

DBOS.setConfig({ name: 'wfbridge-bench', systemDatabaseUrl: process.env.DBOS_SYSTEM_DATABASE_URL });
DBOS.logger.level = 'error';
await DBOS.launch();
try {
  await batch(); // warm-up
  const wall = [], cpu = [];
  for (let r = 0; r < reps; r++) {
    const w0 = performance.now(), c0 = cpuSeconds();
    await batch();
    const w = (performance.now() - w0) / 1e3, c = cpuSeconds() - c0;
    wall.push(count / w);
    cpu.push(count / c);
  }
  emit(row, 'wall', 'instances/s', wall);
  emit(row, 'cpu', 'instances per CPU-second (node only)', cpu);
} finally {
  await DBOS.shutdown();
}
