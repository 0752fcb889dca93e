// A stand-in for porthole-sidecar, for UI development only (no auth; python pty bridge).
// Usage: node mock-sidecar.mjs [port]   then open http://127.0.0.1:PORT/
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { WebSocketServer } from 'ws';

const uiDir = path.resolve(import.meta.dirname, '../../ui/dist');
const BRIDGE = `
import os, pty, sys, select, fcntl, termios, struct, signal
cols, rows = int(sys.argv[1]), int(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.environ['TERM'] = 'xterm-256color'
    os.execvp('bash', ['bash', '-l'])
def setsize(c, r):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', r, c, 0, 0))
setsize(cols, rows)
ctl = os.fdopen(3, 'rb', buffering=0)
buf = b''
while True:
    r, _, _ = select.select([fd, 0, 3], [], [])
    if fd in r:
        try: data = os.read(fd, 65536)
        except OSError: data = b''
        if not data: break
        os.write(1, data)
    if 0 in r:
        data = os.read(0, 65536)
        if not data:
            os.kill(pid, signal.SIGHUP)
            break
        os.write(fd, data)
    if 3 in r:
        more = ctl.read(1024)
        if not more:
            os.kill(pid, signal.SIGHUP)
            break
        buf += more
        while b'\\n' in buf:
            line, buf = buf.split(b'\\n', 1)
            c, rr = map(int, line.split())
            setsize(c, rr)
            os.kill(pid, signal.SIGWINCH)
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st) if hasattr(os, 'waitstatus_to_exitcode') else 0)
`;

let next = 1;
const terms = new Map();
let workspace = null;
let revision = 0;

function create(cols, rows) {
  const id = `t${next++}`;
  const p = spawn('python3', ['-c', BRIDGE, String(cols), String(rows)], { stdio: ['pipe', 'pipe', 'inherit', 'pipe'], env: { ...process.env, PORTHOLE_PANE: id } });
  const t = { id, p, cols, rows, scroll: [], clients: new Set(), alive: true, code: null };
  p.stdout.on('data', (d) => {
    t.scroll.push(d);
    for (const c of t.clients) c.send(d);
  });
  p.on('exit', (code) => {
    t.alive = false;
    t.code = code ?? 0;
    for (const c of t.clients) c.send(JSON.stringify({ type: 'exit', code: t.code }));
  });
  terms.set(id, t);
  return t;
}
const info = (t) => ({ id: t.id, pid: t.p.pid, cwd: process.env.HOME, command: ['-bash'], cols: t.cols, rows: t.rows, alive: t.alive, exit_code: t.code, busy: false, foreground: 'bash' });

function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body === undefined ? '' : JSON.stringify(body));
}
async function body(req) {
  let s = '';
  for await (const c of req) s += c;
  return s ? JSON.parse(s) : null;
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const m = url.pathname.match(/^\/api\/terminals\/(t\d+)$/);
  if (url.pathname === '/api/login-codes') return json(res, 200, { url: `http://${req.headers.host}/` });
  if (url.pathname === '/api/terminals' && req.method === 'POST') {
    const b = await body(req);
    return json(res, 201, { id: create(b.cols, b.rows).id });
  }
  if (url.pathname === '/api/terminals') return json(res, 200, { terminals: [...terms.values()].map(info) });
  if (m) {
    const t = terms.get(m[1]);
    if (!t) return json(res, 404, { error: { code: 'not_found', message: 'no such terminal' } });
    if (req.method === 'DELETE') {
      t.p.kill('SIGHUP');
      terms.delete(t.id);
      for (const c of t.clients) c.close();
      return json(res, 204);
    }
    return json(res, 200, info(t));
  }
  if (url.pathname === '/api/workspace') {
    if (req.method === 'PUT') {
      workspace = (await body(req)).workspace;
      return json(res, 200, { revision: ++revision });
    }
    return json(res, 200, { workspace, revision });
  }
  const file = path.join(uiDir, url.pathname === '/' ? 'index.html' : url.pathname);
  if (file.startsWith(uiDir) && fs.existsSync(file) && fs.statSync(file).isFile()) {
    const type = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' }[path.extname(file)] ?? 'application/octet-stream';
    res.writeHead(200, { 'content-type': type });
    return res.end(fs.readFileSync(file));
  }
  json(res, 404, { error: { code: 'not_found', message: 'no route' } });
});

const wss = new WebSocketServer({ noServer: true });
server.on('upgrade', (req, sock, head) => {
  const m = new URL(req.url, 'http://x').pathname.match(/^\/api\/terminals\/(t\d+)\/socket$/);
  const t = m && terms.get(m[1]);
  if (!t) return sock.destroy();
  wss.handleUpgrade(req, sock, head, (ws) => {
    for (const d of t.scroll) ws.send(d);
    if (!t.alive) ws.send(JSON.stringify({ type: 'exit', code: t.code }));
    t.clients.add(ws);
    ws.on('message', (data, isBinary) => {
      if (isBinary) return t.p.stdin.write(data);
      const msg = JSON.parse(String(data));
      if (msg.type === 'resize') {
        t.cols = msg.cols;
        t.rows = msg.rows;
        t.p.stdio[3].write(`${msg.cols} ${msg.rows}\n`);
      }
    });
    ws.on('close', () => t.clients.delete(ws));
  });
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    for (const t of terms.values()) t.p.kill('SIGHUP');
    process.exit(0);
  });
}
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}/`, token: 'mock', login_url: `http://127.0.0.1:${port}/`, pid: process.pid, protocol: 1 }));
});
