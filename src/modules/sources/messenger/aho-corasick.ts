/**
 * Aho–Corasick over UTF-16 code units: finds, in one pass over a text, which of many patterns
 * occur in it as substrings. Nodes are integers; transitions live in one Map keyed by
 * node * 65536 + code unit, which keeps a million-node automaton to flat numbers.
 */
export class AhoCorasick {
  private readonly next = new Map<number, number>();
  private fail: Int32Array = new Int32Array(0);
  /** Nearest node along the fail chain (itself included) that ends a pattern, or -1. */
  private outputLink: Int32Array = new Int32Array(0);
  private readonly patternsAt = new Map<number, number[]>();
  private nodeCount = 1;

  constructor(patterns: string[]) {
    patterns.forEach((pattern, id) => {
      if (!pattern) return;
      let node = 0;
      for (let i = 0; i < pattern.length; i++) {
        const key = node * 65536 + pattern.charCodeAt(i);
        let child = this.next.get(key);
        if (child === undefined) {
          child = this.nodeCount++;
          this.next.set(key, child);
        }
        node = child;
      }
      const list = this.patternsAt.get(node);
      if (list) list.push(id);
      else this.patternsAt.set(node, [id]);
    });
    this.link();
  }

  private link(): void {
    this.fail = new Int32Array(this.nodeCount);
    this.outputLink = new Int32Array(this.nodeCount).fill(-1);
    // Children per node, gathered once for the breadth-first pass.
    const children: [number, number][][] = Array.from({ length: this.nodeCount }, () => []);
    for (const [key, child] of this.next) children[Math.floor(key / 65536)]!.push([key % 65536, child]);
    const queue: number[] = [];
    for (const [, child] of children[0]!) {
      this.fail[child] = 0;
      queue.push(child);
    }
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head]!;
      this.outputLink[node] = this.patternsAt.has(node) ? node : this.outputLink[this.fail[node]!]!;
      for (const [code, child] of children[node]!) {
        let f = this.fail[node]!;
        while (f !== 0 && !this.next.has(f * 65536 + code)) f = this.fail[f]!;
        const target = this.next.get(f * 65536 + code);
        this.fail[child] = target !== undefined && target !== child ? target : 0;
        queue.push(child);
      }
    }
  }

  /** Ids of the patterns found in the text (each once). */
  search(text: string, found: Set<number> = new Set()): Set<number> {
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      let target = this.next.get(node * 65536 + code);
      while (target === undefined && node !== 0) {
        node = this.fail[node]!;
        target = this.next.get(node * 65536 + code);
      }
      node = target ?? 0;
      for (let out = this.outputLink[node]!; out > 0; out = this.outputLink[this.fail[out]!]!) {
        for (const id of this.patternsAt.get(out)!) found.add(id);
      }
    }
    return found;
  }
}
