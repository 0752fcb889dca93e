// Starts a real porthole-sidecar in web mode for the e2e suite, the way a user's machine
// would run it but sealed off: HOME and XDG_* in a fresh temp folder, SHELL=/bin/bash with
// a plain `$ ` prompt, loopback exempt from any http_proxy. It builds nothing: ui/dist and
// target/debug/porthole-sidecar must exist (PORTHOLE_UI_DIR / PORTHOLE_SIDECAR_BIN override).
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const repo = path.resolve(import.meta.dirname, '../..');

export interface Sidecar {
  child: ChildProcess;
  /** the ready line's `url` (`http://127.0.0.1:PORT/`) and bearer `token` */
  url: string;
  token: string;
  /** the temp folder holding home/, config/, data/ … and sidecar.log */
  tmp: string;
  home: string;
  /** `$XDG_DATA_HOME` (browser profiles live under `porthole/browsers`) */
  data: string;
  /** the directory holding `config.toml` (`$XDG_CONFIG_HOME/porthole`; may not exist yet) */
  config: string;
  /** the directory holding `session.json` (`$XDG_STATE_HOME/porthole`; may not exist yet) */
  state: string;
  log: string;
  /** Calls the API with the bearer token; a non-2xx answer throws with its body. */
  call(method: string, p: string, body?: unknown): Promise<any>;
  /**
   * `POST /api/shutdown`, then SIGKILL after 8 s; removes the temp folder unless `keep`
   * (a restart test starts the next sidecar in it) or `PORTHOLE_E2E_KEEP`.
   */
  stop(opts?: { keep?: boolean }): Promise<void>;
}

/**
 * Starts a sidecar. `display`: the X display it may open windows on (pop-out), or none:
 * DISPLAY and WAYLAND_DISPLAY are removed so pop-out is unavailable whatever the machine
 * has. `port`: the port to bind (default: a free one). `env`: extra variables for it (e.g. the test-only `PORTHOLE_PROXY_GRANT_TTL_MS`,
 * protocol §6.3). `tmp`: a temp folder to use again (a restarted sidecar finds the previous
 * one's state and config there); default a fresh one. Rejects when it exits or prints no
 * ready line within 15 s (the error names the log).
 */
export async function startSidecar(opts: { name: string; display?: string; env?: Record<string, string>; port?: number; tmp?: string }): Promise<Sidecar> {
  const bin = process.env.PORTHOLE_SIDECAR_BIN ?? path.join(repo, 'target/debug/porthole-sidecar');
  const uiDir = process.env.PORTHOLE_UI_DIR ?? path.join(repo, 'ui/dist');
  if (!fs.existsSync(path.join(uiDir, 'index.html'))) throw new Error(`no UI build at ${uiDir}: run \`npm run build\` in ui/`);
  if (!fs.existsSync(bin)) throw new Error(`no sidecar at ${bin}: run \`cargo build -p sidecar\``);
  const tmp = opts.tmp ?? fs.mkdtempSync(path.join(os.tmpdir(), `porthole-e2e-${opts.name}-`));
  const env: NodeJS.ProcessEnv = { ...process.env, SHELL: '/bin/bash', no_proxy: '127.0.0.1,localhost', NO_PROXY: '127.0.0.1,localhost' };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  if (opts.display) env.DISPLAY = opts.display;
  Object.assign(env, opts.env);
  const dirs = { HOME: 'home', XDG_CONFIG_HOME: 'config', XDG_DATA_HOME: 'data', XDG_CACHE_HOME: 'cache', XDG_STATE_HOME: 'state', XDG_RUNTIME_DIR: 'runtime' };
  for (const [key, d] of Object.entries(dirs)) {
    env[key] = path.join(tmp, d);
    fs.mkdirSync(env[key]!, { mode: 0o700, recursive: true });
  }
  // A plain, predictable prompt for the tests.
  fs.writeFileSync(path.join(env.HOME!, '.bash_profile'), 'export PS1="\\$ "\nexport PROMPT_COMMAND=\n');
  fs.writeFileSync(path.join(env.HOME!, '.bashrc'), 'export PS1="\\$ "\n');

  const child = spawn(bin, ['--web', '--port', String(opts.port ?? 0), '--ui-dir', uiDir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = path.join(tmp, opts.tmp ? `sidecar-${Date.now()}.log` : 'sidecar.log');
  child.stderr!.pipe(fs.createWriteStream(log));
  const ready = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sidecar printed no ready line in 15 s (log: ${log})`)), 15_000);
    child.once('exit', (code) => reject(new Error(`sidecar exited with ${code} before it was ready (log: ${log})`)));
    readline.createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line));
      } catch (e) {
        reject(new Error(`bad ready line ${JSON.stringify(line)}: ${e}`));
      }
    });
  });

  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(new URL(p, ready.url), {
      method,
      headers: { authorization: `Bearer ${ready.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : res.json();
  };
  const stop = async (stopOpts?: { keep?: boolean }) => {
    if (child.exitCode === null && child.signalCode === null) {
      await call('POST', '/api/shutdown').catch(() => child.kill('SIGTERM'));
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const t = setTimeout(() => (child.kill('SIGKILL'), resolve()), 8000);
        child.once('exit', () => (clearTimeout(t), resolve()));
      });
    }
    if (!process.env.PORTHOLE_E2E_KEEP && !stopOpts?.keep) fs.rmSync(tmp, { recursive: true, force: true });
  };
  return { child, url: ready.url, token: ready.token, tmp, home: env.HOME!, data: env.XDG_DATA_HOME!, config: path.join(env.XDG_CONFIG_HOME!, 'porthole'), state: path.join(env.XDG_STATE_HOME!, 'porthole'), log, call, stop };
}
