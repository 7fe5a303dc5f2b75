/**
 * A multimap from ASCII names to small integers, kept in typed arrays: an open-addressing hash
 * table (linear probing) over entries whose names sit in one byte arena.
 *
 * Why not a Map<string, …>: the lookalike index holds every watched domain's permutations, some
 * 5 million names for 10,000 domains. As a Map that is 5 million strings on the heap, ~700 MB,
 * and measured, inserting them cost four times generating them, most of it in garbage
 * collection that walks those strings again and again. Here they are ~150 MB of typed arrays
 * the collector never walks, and an insert is a hash and a few array writes.
 */

// FNV-1a over the characters, and a second 32-bit hash (murmur-style mixing) that a probe
// compares before it compares bytes: two names collide in both about once in 2^64.
let hashA = 0;
let hashB = 0;
function hash(name: string): void {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ name.length;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  hashA = a >>> 0;
  hashB = b >>> 0;
}

export function createNameTable(expected = 1024) {
  let capacity = 1 << Math.max(4, Math.ceil(Math.log2(expected * 2)));
  // Slot k is slots[2k] (the first hash) and slots[2k + 1] (entry + 1; 0 for empty): a probe
  // reads one cache line, and a name that is not there (most lookups) touches nothing else.
  let slots = new Uint32Array(capacity * 2);
  let size = 0;
  // Entry e: its name's bytes arena[offsets[e] .. offsets[e] + lengths[e]), its hashes, its value.
  let entries = Math.max(16, expected);
  let offsets = new Uint32Array(entries);
  let lengths = new Uint8Array(entries);
  let firstHashes = new Uint32Array(entries);
  let secondHashes = new Uint32Array(entries);
  let values = new Int32Array(entries);
  let arena = new Uint8Array(entries * 16);
  let used = 0;

  const grown = <T extends Uint32Array | Uint8Array | Int32Array>(array: T, length: number): T => {
    const copy = new (array.constructor as new (length: number) => T)(length);
    copy.set(array);
    return copy;
  };

  function place(entry: number) {
    const first = firstHashes[entry]!;
    let slot = first & (capacity - 1);
    while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & (capacity - 1);
    slots[2 * slot] = first;
    slots[2 * slot + 1] = entry + 1;
  }

  function matches(entry: number, name: string): boolean {
    if (secondHashes[entry] !== hashB || lengths[entry] !== name.length) return false;
    const offset = offsets[entry]!;
    for (let i = 0; i < name.length; i++) if (arena[offset + i] !== name.charCodeAt(i)) return false;
    return true;
  }

  return {
    get size() {
      return size;
    },

    /** Stores `value` under `name` (ASCII, at most 255 characters); a name may hold many values. */
    add(name: string, value: number): void {
      if (size === entries) {
        entries *= 2;
        offsets = grown(offsets, entries);
        lengths = grown(lengths, entries);
        firstHashes = grown(firstHashes, entries);
        secondHashes = grown(secondHashes, entries);
        values = grown(values, entries);
      }
      if (used + name.length > arena.length) {
        const larger = new Uint8Array(Math.max(arena.length * 2, used + name.length));
        larger.set(arena.subarray(0, used));
        arena = larger;
      }
      // At most half full: probes stay short.
      if ((size + 1) * 2 > capacity) {
        capacity *= 2;
        slots = new Uint32Array(capacity * 2);
        for (let entry = 0; entry < size; entry++) place(entry);
      }
      hash(name);
      const entry = size++;
      offsets[entry] = used;
      lengths[entry] = name.length;
      for (let i = 0; i < name.length; i++) arena[used++] = name.charCodeAt(i);
      firstHashes[entry] = hashA;
      secondHashes[entry] = hashB;
      values[entry] = value;
      place(entry);
    },

    /** Calls `found` with each value stored under `name`, in the order they were added. */
    find(name: string, found: (value: number) => void): void {
      if (name.length > 255) return;
      hash(name);
      for (let slot = hashA & (capacity - 1); slots[2 * slot + 1] !== 0; slot = (slot + 1) & (capacity - 1)) {
        if (slots[2 * slot] !== hashA) continue;
        const entry = slots[2 * slot + 1]! - 1;
        if (matches(entry, name)) found(values[entry]!);
      }
    },
  };
}
