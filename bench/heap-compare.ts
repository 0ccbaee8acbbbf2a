/**
 * Compares V8 heap snapshots (as written by `SOAK_HEAP_SNAPSHOTS=... make bench-soak`) by
 * constructor: instance count, shallow size and retained size in each, and the growth from the
 * first to the last. Retained sizes come from the dominator tree, computed the way Chrome DevTools
 * does for its Summary view: an instance counts towards its constructor's retained size unless
 * another instance of the same constructor dominates it. Weak edges retain nothing.
 *
 *   node bench/heap-compare.ts a.heapsnapshot b.heapsnapshot [c.heapsnapshot ...] [--top N]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fmt } from './stats.ts';

interface ClassTotals {
  count: number;
  selfSize: number;
  retainedSize: number;
}

interface HeapSnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** DevTools' grouping: objects by constructor name, everything else by its kind. */
function classOf(type: string, name: string): string {
  switch (type) {
    case 'object':
    case 'native':
      return name;
    case 'closure':
      return '(closure)';
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'code':
      return '(compiled code)';
    case 'hidden':
    case 'object shape':
      return '(system)';
    default:
      return `(${type})`;
  }
}

export function summarise(file: string): Map<string, ClassTotals> {
  const snapshot = JSON.parse(fs.readFileSync(file, 'utf8')) as HeapSnapshotFile;
  const { meta } = snapshot.snapshot;
  const nodeFieldCount = meta.node_fields.length;
  const edgeFieldCount = meta.edge_fields.length;
  const [typeOffset, nameOffset, selfSizeOffset, edgeCountOffset] = ['type', 'name', 'self_size', 'edge_count'].map((field) => meta.node_fields.indexOf(field)) as [number, number, number, number];
  const [edgeTypeOffset, edgeToOffset] = ['type', 'to_node'].map((field) => meta.edge_fields.indexOf(field)) as [number, number];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const weakEdge = edgeTypes.indexOf('weak');
  const { nodes, edges, strings } = snapshot;
  const nodeCount = nodes.length / nodeFieldCount;

  // Outgoing edges of node i are edges[firstEdge[i] .. firstEdge[i + 1]), strong ones only.
  const firstEdge = new Uint32Array(nodeCount + 1);
  for (let i = 0, edgeIndex = 0; i < nodeCount; i++) {
    firstEdge[i] = edgeIndex;
    edgeIndex += (nodes[i * nodeFieldCount + edgeCountOffset] as number) * edgeFieldCount;
    firstEdge[i + 1] = edgeIndex;
  }
  const forEachChild = (node: number, visit: (child: number) => void) => {
    for (let e = firstEdge[node] as number; e < (firstEdge[node + 1] as number); e += edgeFieldCount) {
      if (edges[e + edgeTypeOffset] === weakEdge) continue;
      visit((edges[e + edgeToOffset] as number) / nodeFieldCount);
    }
  };

  // Reverse postorder from the root (node 0), iteratively.
  const postorderIndex = new Int32Array(nodeCount).fill(-1);
  const order: number[] = [];
  const visited = new Uint8Array(nodeCount);
  const stack: [number, number][] = [[0, firstEdge[0] as number]];
  visited[0] = 1;
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as [number, number];
    const [node] = top;
    let pushed = false;
    while (top[1] < (firstEdge[node + 1] as number)) {
      const e = top[1];
      top[1] += edgeFieldCount;
      if (edges[e + edgeTypeOffset] === weakEdge) continue;
      const child = (edges[e + edgeToOffset] as number) / nodeFieldCount;
      if (visited[child]) continue;
      visited[child] = 1;
      stack.push([child, firstEdge[child] as number]);
      pushed = true;
      break;
    }
    if (!pushed && stack[stack.length - 1] === top) {
      stack.pop();
      postorderIndex[node] = order.length;
      order.push(node);
    }
  }

  const predecessors: number[][] = Array.from({ length: nodeCount }, () => []);
  for (const node of order) forEachChild(node, (child) => (predecessors[child] as number[]).push(node));

  // Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm".
  const idom = new Int32Array(nodeCount).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while ((postorderIndex[a] as number) < (postorderIndex[b] as number)) a = idom[a] as number;
      while ((postorderIndex[b] as number) < (postorderIndex[a] as number)) b = idom[b] as number;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = order.length - 2; i >= 0; i--) {
      const node = order[i] as number;
      let dominator = -1;
      for (const predecessor of predecessors[node] as number[]) {
        if (idom[predecessor] === -1) continue;
        dominator = dominator === -1 ? predecessor : intersect(predecessor, dominator);
      }
      if (dominator !== -1 && idom[node] !== dominator) {
        idom[node] = dominator;
        changed = true;
      }
    }
  }

  // Retained size: a node's own size plus that of everything it dominates (children before parents in postorder).
  const retained = new Float64Array(nodeCount);
  for (const node of order) retained[node] = nodes[node * nodeFieldCount + selfSizeOffset] as number;
  for (const node of order) if (node !== 0) retained[idom[node] as number] = (retained[idom[node] as number] as number) + (retained[node] as number);

  const classes = order.map((node) => classOf(nodeTypes[nodes[node * nodeFieldCount + typeOffset] as number] as string, strings[nodes[node * nodeFieldCount + nameOffset] as number] as string));
  const classByNode = new Map<number, string>();
  order.forEach((node, i) => classByNode.set(node, classes[i] as string));

  // Walk the dominator tree; an instance with an ancestor of its own class is already counted.
  const dominated: number[][] = Array.from({ length: nodeCount }, () => []);
  for (const node of order) if (node !== 0) (dominated[idom[node] as number] as number[]).push(node);
  const totals = new Map<string, ClassTotals>();
  const open = new Map<string, number>();
  const walk: [number, boolean][] = [[0, false]];
  while (walk.length > 0) {
    const [node, leaving] = walk.pop() as [number, boolean];
    const name = classByNode.get(node) as string;
    if (leaving) {
      open.set(name, (open.get(name) as number) - 1);
      continue;
    }
    const entry = totals.get(name) ?? { count: 0, selfSize: 0, retainedSize: 0 };
    entry.count += 1;
    entry.selfSize += nodes[node * nodeFieldCount + selfSizeOffset] as number;
    if (!open.get(name)) entry.retainedSize += retained[node] as number;
    totals.set(name, entry);
    open.set(name, (open.get(name) ?? 0) + 1);
    walk.push([node, true]);
    for (const child of dominated[node] as number[]) walk.push([child, false]);
  }
  totals.delete(classByNode.get(0) as string);
  return totals;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isMain) {
  const args = process.argv.slice(2);
  const topIndex = args.indexOf('--top');
  const top = topIndex >= 0 ? Number(args.splice(topIndex, 2)[1]) : 25;
  if (args.length < 2) {
    console.error('usage: node bench/heap-compare.ts first.heapsnapshot ... last.heapsnapshot [--top N]');
    process.exit(2);
  }
  const summaries = args.map((file) => summarise(file));
  const first = summaries[0] as Map<string, ClassTotals>;
  const last = summaries[summaries.length - 1] as Map<string, ClassTotals>;
  const names = new Set([...first.keys(), ...last.keys()]);
  const growth = (name: string) => (last.get(name)?.retainedSize ?? 0) - (first.get(name)?.retainedSize ?? 0);
  const kib = (bytes: number | undefined) => fmt((bytes ?? 0) / 1024, 0);
  console.log(`Heap snapshots: ${args.map((file) => path.basename(file)).join(', ')}`);
  for (const [i, summary] of summaries.entries()) {
    const total = [...summary.values()].reduce((sum, entry) => sum + entry.selfSize, 0);
    console.log(`  ${path.basename(args[i] as string)}: ${fmt(total / 1024 / 1024)} MiB in live objects`);
  }
  console.log(`\nTop ${top} constructors by growth of retained size, first to last (counts and KiB in each snapshot):`);
  console.log('constructor'.padEnd(44) + 'counts'.padStart(24) + 'retained KiB'.padStart(28) + 'growth KiB'.padStart(12));
  for (const name of [...names].sort((a, b) => growth(b) - growth(a)).slice(0, top)) {
    const counts = summaries.map((summary) => String(summary.get(name)?.count ?? 0)).join(' / ');
    const retainedSizes = summaries.map((summary) => kib(summary.get(name)?.retainedSize)).join(' / ');
    console.log(name.slice(0, 43).padEnd(44) + counts.padStart(24) + retainedSizes.padStart(28) + kib(growth(name)).padStart(12));
  }
}
