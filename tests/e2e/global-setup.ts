// Starts one sidecar in web mode for the whole run (it builds nothing: ui/dist and
// target/debug/porthole-sidecar must exist). HOME and XDG_* point at a temp folder and
// SHELL=/bin/bash. It runs without DISPLAY and WAYLAND_DISPLAY, so pop-out is unavailable
// there whatever the machine has (specs/popout.spec.ts starts its own sidecar on an Xvfb).
// The ready line's url and token reach the tests through env vars.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const repo = path.resolve(import.meta.dirname, '../..');

export default async function globalSetup(): Promise<() => Promise<void>> {
  const bin = process.env.PORTHOLE_SIDECAR_BIN ?? path.join(repo, 'target/debug/porthole-sidecar');
  const uiDir = process.env.PORTHOLE_UI_DIR ?? path.join(repo, 'ui/dist');
  if (!fs.existsSync(path.join(uiDir, 'index.html'))) throw new Error(`no UI build at ${uiDir}: run \`npm run build\` in ui/`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'porthole-e2e-'));
  const env: NodeJS.ProcessEnv = { ...process.env, SHELL: '/bin/bash', no_proxy: '127.0.0.1,localhost', NO_PROXY: '127.0.0.1,localhost' };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  for (const d of ['home', 'config', 'data', 'cache', 'state', 'runtime']) fs.mkdirSync(path.join(tmp, d), { mode: 0o700 });
  env.HOME = path.join(tmp, 'home');
  env.XDG_CONFIG_HOME = path.join(tmp, 'config');
  env.XDG_DATA_HOME = path.join(tmp, 'data');
  env.XDG_CACHE_HOME = path.join(tmp, 'cache');
  env.XDG_STATE_HOME = path.join(tmp, 'state');
  env.XDG_RUNTIME_DIR = path.join(tmp, 'runtime');
  // A plain, predictable prompt for the tests.
  fs.writeFileSync(path.join(env.HOME, '.bash_profile'), 'export PS1="\\$ "\nexport PROMPT_COMMAND=\n');
  fs.writeFileSync(path.join(env.HOME, '.bashrc'), 'export PS1="\\$ "\n');

  const args = bin.endsWith('.mjs') ? [bin, '0'] : ['--web', '--port', '0', '--ui-dir', uiDir];
  const cmd = bin.endsWith('.mjs') ? process.execPath : bin;
  if (!bin.endsWith('.mjs') && !fs.existsSync(bin)) throw new Error(`no sidecar at ${bin}: run \`cargo build -p sidecar\``);
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logPath = path.join(tmp, 'sidecar.log');
  const log = fs.createWriteStream(logPath);
  child.stderr!.pipe(log);

  const ready = await new Promise<{ url: string; token: string; login_url: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sidecar printed no ready line in 15 s (log: ${logPath})`)), 15_000);
    child.once('exit', (code) => reject(new Error(`sidecar exited with ${code} before it was ready (log: ${logPath})`)));
    readline.createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line));
      } catch (e) {
        reject(new Error(`bad ready line ${JSON.stringify(line)}: ${e}`));
      }
    });
  });
  process.env.PORTHOLE_E2E_URL = ready.url;
  process.env.PORTHOLE_E2E_TOKEN = ready.token;
  process.env.PORTHOLE_E2E_HOME = env.HOME;
  process.env.PORTHOLE_E2E_LOG = logPath;

  return async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, 6000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    if (!process.env.PORTHOLE_E2E_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  };
}
