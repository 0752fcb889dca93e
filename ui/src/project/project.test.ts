import { describe, expect, it } from 'vitest';
import { commandText, loopbackPort, parsePresets, parseProjectInfo, ProjectPrompts, type ProjectApi } from './project';

const sha = 'b'.repeat(64);
const info = (trusted: boolean) => ({
  file: '/p/.porthole.toml',
  sha256: sha,
  trusted,
  layouts: [{ layout: 'dev', panes: [{ command: ['sleep', '9'], cwd: '/p', split: null }], browsers: [] }],
  viewports: [],
});

class FakeApi implements ProjectApi {
  calls: string[] = [];
  constructor(public answer: unknown) {}
  project(terminal: string) {
    this.calls.push(`project ${terminal}`);
    return Promise.resolve(this.answer);
  }
  trust(file: string, sha256: string) {
    this.calls.push(`trust ${file} ${sha256.slice(0, 4)}`);
    return Promise.resolve({});
  }
  up(near: string, layout: string) {
    this.calls.push(`up ${near} ${layout}`);
    return Promise.resolve({ layout, panes: [{ reused: true }, { reused: false }], browsers: [{ reused: true }] });
  }
}

describe('project', () => {
  it('parses the project answer and refuses malformed ones', () => {
    expect(parseProjectInfo({ file: null })).toBeNull();
    expect(parseProjectInfo(info(true))?.layouts[0].panes[0].command).toEqual(['sleep', '9']);
    expect(() => parseProjectInfo({ ...info(true), sha256: 'x' })).toThrow();
    expect(() => parseProjectInfo({ ...info(true), layouts: [{ layout: 'a', panes: [{ command: [], cwd: '/' }], browsers: [] }] })).toThrow();
  });

  it('parses the presets in force and finds the loopback port of a pane URL', () => {
    expect(parsePresets({ file: null })).toBeNull();
    expect(parsePresets({ ...info(true), viewports: [{ name: 'Phone', width: 400, height: 700, dpr: 3 }] })).toEqual([{ name: 'Phone', width: 400, height: 700, dpr: 3 }]);
    expect(() => parsePresets({ ...info(true), viewports: [{ name: 'Phone', width: 40, height: 700, dpr: 3 }] })).toThrow();
    expect(loopbackPort('http://localhost:5173/x')).toBe(5173);
    expect(loopbackPort('http://127.0.0.1/')).toBe(80);
    expect(loopbackPort('https://example.com:5173/')).toBeNull();
    expect(loopbackPort('about:blank')).toBeNull();
  });

  it('shows a shell line as typed and quotes argv words that need it', () => {
    expect(commandText(['/bin/sh', '-c', 'npm run dev | tee log'])).toBe('npm run dev | tee log');
    expect(commandText(['python3', '-m', 'http.server', '8000'])).toBe('python3 -m http.server 8000');
    expect(commandText(['echo', "it's here"])).toBe(`echo 'it'\\''s here'`);
  });

  it('starts a trusted layout at once', async () => {
    const api = new FakeApi(info(true));
    const p = new ProjectPrompts(api);
    await p.start('t1', 't1', 'dev');
    expect(api.calls).toEqual(['project t1', 'up t1 dev']);
    expect(p.state().question).toBeNull();
    expect(p.state().done).toBe('Layout dev: 1 started, 2 reused');
  });

  it('asks before an untrusted layout starts, and starts it only once trusted', async () => {
    const api = new FakeApi(info(false));
    const p = new ProjectPrompts(api);
    await p.start('t1', 't1', 'dev');
    expect(api.calls).toEqual(['project t1']);
    expect(p.state().question?.start).toEqual({ near: 't1', layout: 'dev' });
    p.dismiss();
    expect(p.state().question).toBeNull();
    expect(api.calls, 'declined: nothing trusted, nothing started').toEqual(['project t1']);
    await p.start('t1', 't1', 'dev');
    await p.trust();
    expect(api.calls).toEqual(['project t1', 'project t1', 'trust /p/.porthole.toml bbbb', 'up t1 dev']);
    expect(p.state()).toEqual({ question: null, busy: false, error: null, done: 'Layout dev: 1 started, 2 reused' });
  });

  it('a prompt the sidecar asked for trusts without starting anything', async () => {
    const api = new FakeApi(info(false));
    const p = new ProjectPrompts(api);
    p.ask({ file: '/p/.porthole.toml', sha256: sha, layouts: [], layout: 'dev', start: null });
    await p.trust();
    expect(api.calls).toEqual(['trust /p/.porthole.toml bbbb']);
  });
});
