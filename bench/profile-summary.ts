/**
 * `node bench/profile-summary.ts <file.cpuprofile> [top]`: where a V8 CPU profile (from
 * `npm run bench -- --cpu-prof`) spent its time: self time by package and by function, and
 * inclusive ("total") time of the hottest functions.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [top]');
const top = Number(process.argv.slice(3).find((a) => /^\d+$/.test(a)) ?? 25);
const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const selfUs = new Map<number, number>();
prof.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
});
// Idle samples (the server waiting for work, e.g. while the other server is measured) are left out.
let idle = 0;
for (const [id, us] of selfUs) {
  if ((byId.get(id) as Node).callFrame.functionName === '(idle)') {
    idle += us;
    selfUs.delete(id);
  }
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

function pkgOf(url: string): string {
  if (!url) return '(native/vm)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return 'node-core';
  const src = /\/(src|bench|mikro-orm\.config)[\s\S]*$/.exec(url);
  return src ? `app:${src[0].replace(/^\//, '').split('/').slice(0, 2).join('/')}` : url;
}
function fileOf(url: string): string {
  const m = /node_modules\/(.*)$/.exec(url) ?? /\/((?:src|bench)\/.*)$/.exec(url);
  return m ? m[1] : url || '(native)';
}
const label = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${fileOf(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const selfByPkg = new Map<string, number>();
const selfByFn = new Map<string, number>();
const totalByFn = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id) as Node;
  add(selfByPkg, pkgOf(n.callFrame.url), us);
  add(selfByFn, label(n), us);
  // Inclusive time: every distinct frame on the stack gets the sample once.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur != null; cur = parent.get(cur)) {
    const l = label(byId.get(cur) as Node);
    if (!seen.has(l)) {
      seen.add(l);
      add(totalByFn, l, us);
    }
  }
}

const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
const print = (title: string, m: Map<string, number>, n: number) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`  ${pct(v)}  ${k}`);
};
console.log(
  `${file}: ${(total / 1e6).toFixed(1)} s busy (${(idle / 1e6).toFixed(1)} s idle left out); % of busy time`,
);
print('self time by package', selfByPkg, 20);
print('self time by function', selfByFn, top);
print('total (inclusive) time by function', totalByFn, top);

// A top-down call tree (frames merged by name along each path), down to `min` percent.
if (process.argv.includes('--tree')) {
  const min = Number(process.env.TREE_MIN ?? 1.5);
  interface T {
    us: number;
    kids: Map<string, T>;
  }
  const root: T = { us: 0, kids: new Map() };
  for (const [id, us] of selfUs) {
    const stack: string[] = [];
    for (let cur: number | undefined = id; cur != null; cur = parent.get(cur))
      stack.push(label(byId.get(cur) as Node));
    let t = root;
    t.us += us;
    for (const l of stack.reverse()) {
      let k = t.kids.get(l);
      if (!k) {
        k = { us: 0, kids: new Map() };
        t.kids.set(l, k);
      }
      k.us += us;
      t = k;
    }
  }
  console.log(`\ncall tree (>= ${min}% of busy time)`);
  const walk = (t: T, depth: number) => {
    for (const [l, k] of [...t.kids].sort((a, b) => b[1].us - a[1].us)) {
      if ((k.us / total) * 100 < min) continue;
      console.log(`${pct(k.us)} ${'  '.repeat(depth)}${l}`);
      walk(k, depth + 1);
    }
  };
  walk(root, 0);
}
