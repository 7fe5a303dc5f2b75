/**
 * `npm run bench -- cli [--runs n] [--node path] [--compare-tsx]`
 *
 * How long the `dragnet` command takes to start and answer, as a person runs it: wall time of
 * `node bin/dragnet.js --help` and `node bin/dragnet.js user list` (an embedded store with 20
 * users, made first in a temporary folder), each run n times one after the other. dist/ is built
 * first when stale (by one untimed call), so no timed run includes a build. The CPU time (user +
 * system, from GNU time when /usr/bin/time exists) is shown beside the wall time: on a busy
 * machine it is the closer estimate of the wall time on an idle one. --node runs another
 * Node binary (e.g. .ci/node-lts's); --compare-tsx also times the TypeScript sources through tsx
 * the way bin/dragnet.js ran them before dist/ existed.
 * Goal: median under 500 ms for both commands; exit code 1 when missed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { positive } from './support/options.ts';
import { median } from './support/load.ts';

const GOAL_MS = 500;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Options {
  runs: number;
  node: string;
  compareTsx?: boolean;
}

// GNU time reports the command's CPU time (user + system), which other work on a shared machine
// stretches far less than the wall time.
const GNU_TIME = '/usr/bin/time';
const CPU_MARK = 'dragnet-bench-cpu';

function timeRuns(
  node: string,
  entry: string[],
  args: string[],
  env: NodeJS.ProcessEnv,
  runs: number,
): { wall: number[]; cpu: number[] } {
  const wall: number[] = [];
  const cpu: number[] = [];
  const withTime = existsSync(GNU_TIME);
  for (let i = 0; i < runs; i++) {
    const command = withTime ? [GNU_TIME, '-f', `${CPU_MARK} %U %S`, node] : [node];
    const started = performance.now();
    const result = spawnSync(command[0]!, [...command.slice(1), ...entry, ...args], {
      cwd: repoRoot,
      env,
      encoding: 'utf8',
    });
    wall.push(performance.now() - started);
    if (result.status !== 0) throw new Error(`dragnet ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    const times = new RegExp(`${CPU_MARK} ([\\d.]+) ([\\d.]+)`).exec(result.stderr);
    if (times) cpu.push((Number(times[1]) + Number(times[2])) * 1000);
  }
  return { wall, cpu };
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

export async function run(argv: string[]): Promise<void> {
  const options = new Command('cli')
    .option('--runs <n>', 'runs of each command', positive('--runs', true, 1000), 20)
    .option('--node <path>', 'the Node binary to run the command with', process.execPath)
    .option('--compare-tsx', 'also time the TypeScript sources run through tsx (3 runs each)')
    .parse(argv, { from: 'user' })
    .opts<Options>();

  const dataDir = mkdtempSync(path.join(tmpdir(), 'dragnet-cli-bench-'));
  const env = { ...process.env, DRAGNET_DATA_DIR: dataDir, DRAGNET_LOG_LEVEL: 'warn' };
  try {
    const version = execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim();
    // Builds dist/ when stale, and makes the store with its users, outside the timed runs.
    for (let i = 1; i <= 20; i++) {
      execFileSync(
        options.node,
        [
          'bin/dragnet.js',
          'user',
          'create',
          '--org',
          `Org ${i % 3}`,
          '--email',
          `user${i}@bench.test`,
          '--password',
          'Bench-Password-42!',
        ],
        { cwd: repoRoot, env, stdio: 'ignore' },
      );
    }
    const variants: { label: string; entry: string[]; runs: number }[] = [
      { label: 'dist (bin/dragnet.js)', entry: ['bin/dragnet.js'], runs: options.runs },
    ];
    if (options.compareTsx)
      variants.push({ label: 'tsx (src/cli/index.ts)', entry: ['--import', 'tsx', 'src/cli/index.ts'], runs: 3 });

    process.stdout.write(
      `Node ${version}, ${options.runs} runs each, load average ${loadavg()[0]!.toFixed(1)} at start\n\n`,
    );
    process.stdout.write(
      '| command | runs with | median | p90 | min | CPU time, median |\n|---|---|---|---|---|---|\n',
    );
    let missed = false;
    for (const args of [['--help'], ['user', 'list']]) {
      for (const variant of variants) {
        const { wall, cpu } = timeRuns(options.node, variant.entry, args, env, variant.runs);
        const middle = median(wall);
        if (variant.entry[0] === 'bin/dragnet.js' && middle >= GOAL_MS) missed = true;
        const cpuMedian = cpu.length ? `${Math.round(median(cpu))} ms` : '-';
        process.stdout.write(
          `| dragnet ${args.join(' ')} | ${variant.label} | ${Math.round(middle)} ms | ${Math.round(percentile(wall, 0.9))} ms | ${Math.round(Math.min(...wall))} ms | ${cpuMedian} |\n`,
        );
      }
    }
    process.stdout.write(
      `\nload average ${loadavg()[0]!.toFixed(1)} at end; goal: median under ${GOAL_MS} ms${missed ? ' (missed)' : ' (met)'}\n`,
    );
    if (missed) process.exitCode = 1;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
