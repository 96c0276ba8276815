// bench.mjs — the bpmn-engine peer of `make bench`: the workloads of bench_component's
// "sequence of 5" (start, five no-op tasks, end), bench_multicore's 1,000 instances started at
// once, and a generated 100-task sequence (bpmn-engine 25 overflows its stack, RangeError, on
// a sequence of 400 tasks, so no larger one), on the in-memory BPMN engine bpmn-engine
// (Node.js, one thread). The definition is parsed once and each instance gets an Engine from
// the parsed context, as the modern runtime reuses a loaded definition. Prints one JSON object
// per figure: {row, column, unit, median, min, max, repetitions}. Usage: node bench.mjs [quick]
import { Engine } from 'bpmn-engine';
import BpmnModdle from 'bpmn-moddle';
import * as Elements from 'bpmn-elements';
import serializer, { TypeResolver } from 'moddle-context-serializer';
import { cpuSeconds, emit } from './stats.mjs';

const quick = process.argv[2] === 'quick';
const reps = quick ? 1 : 5;
const onceReps = quick ? 1 : 3; // 1,000 at once takes ~15 s a time

function sequenceXml(tasks) {
  let flows = '', nodes = '<startEvent id="start"/>', prev = 'start';
  for (let i = 0; i < tasks; i++) {
    nodes += `<task id="t${i}"/>`;
    flows += `<sequenceFlow id="f${i}" sourceRef="${prev}" targetRef="t${i}"/>`;
    prev = `t${i}`;
  }
  nodes += '<endEvent id="end"/>';
  flows += `<sequenceFlow id="fend" sourceRef="${prev}" targetRef="end"/>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="defs">
<process id="seq" isExecutable="true">${nodes}${flows}</process></definitions>`;
}

async function parse(xml) {
  const moddle = new BpmnModdle();
  const ctx = await moddle.fromXML(xml);
  return serializer(ctx, TypeResolver(Elements));
}

function runOnce(sourceContext) {
  return new Promise((resolve, reject) => {
    const engine = new Engine({ name: 'peer', sourceContext });
    engine.execute((err) => (err ? reject(err) : resolve()));
  });
}

// Sequential runs for `seconds`: workflows per CPU-second and per wall second.
async function rate(sourceContext, seconds) {
  await runOnce(sourceContext); // warm up
  let n = 0;
  const c0 = cpuSeconds(), t0 = performance.now();
  while (n < 2 || performance.now() - t0 < seconds * 1000) {
    await runOnce(sourceContext);
    n++;
  }
  const c1 = cpuSeconds(), t1 = performance.now();
  return { cpu: n / (c1 - c0), wall: n / ((t1 - t0) / 1000) };
}

// 1,000 instances started at once, awaited together.
async function atOnce(sourceContext, count) {
  const c0 = cpuSeconds(), t0 = performance.now();
  await Promise.all(Array.from({ length: count }, () => runOnce(sourceContext)));
  const c1 = cpuSeconds(), t1 = performance.now();
  return { cpu: count / (c1 - c0), wall: count / ((t1 - t0) / 1000) };
}

const seq5 = await parse(sequenceXml(5));
const large = await parse(sequenceXml(100));
const cpu = [], wall = [], ocpu = [], owall = [], lcpu = [], cold = [];
for (let r = 0; r < reps; r++) {
  const a = await rate(seq5, quick ? 0.02 : 0.3);
  cpu.push(a.cpu);
  wall.push(a.wall);
  if (r < onceReps) {
    const b = await atOnce(seq5, quick ? 20 : 1000);
    ocpu.push(b.cpu);
    owall.push(b.wall);
  }
  const c = await rate(large, quick ? 0.02 : 0.3);
  lcpu.push(c.cpu);
  const c0 = cpuSeconds();
  await runOnce(await parse(sequenceXml(100)));
  cold.push((cpuSeconds() - c0) * 1e6);
}
emit('sequence of 5', 'cpu', 'workflows per CPU-second', cpu);
emit('sequence of 5', 'wall', 'workflows/s', wall);
emit('1,000 started at once', 'cpu', 'instances per CPU-second', ocpu);
emit('1,000 started at once', 'wall', 'instances/s', owall);
emit('100-task sequence', 'cpu', 'workflows per CPU-second', lcpu);
emit('100-task sequence, cold (parse + run)', 'cpu', 'us', cold);
