import { describe, expect, it } from 'vitest';
import { UI_MESSAGE_MAX_BYTES } from '../api/protocol';
import { ApiError } from '../api/client';
import { type Inbound, Refused, parseInbound, replyTo } from './messages';

const j = (v: unknown) => JSON.stringify(v);

describe('parseInbound', () => {
  const cases: Array<[string, string, Inbound | null]> = [
    ['handles', j({ type: 'handles', assign: { p7: 'b3', p9: 'b12' } }), { type: 'handles', assign: { p7: 'b3', p9: 'b12' } }],
    ['handles: empty assign', j({ type: 'handles', assign: {} }), { type: 'handles', assign: {} }],
    ['handles: a terminal handle is not a browser handle', j({ type: 'handles', assign: { p7: 't3' } }), null],
    ['handles: not a pane id', j({ type: 'handles', assign: { x7: 'b3' } }), null],
    ['handles: assign missing', j({ type: 'handles' }), null],
    [
      'project_trust',
      j({ type: 'project_trust', file: '/p/.porthole.toml', sha256: 'a'.repeat(64), layout: 'dev', layouts: [{ layout: 'dev', panes: [{ command: ['/bin/sh', '-c', 'npm run dev'], cwd: '/p/web', split: 'right' }], browsers: [{ port: 5173, url: 'http://localhost:5173/', mode: null }] }] }),
      {
        type: 'project_trust',
        question: {
          file: '/p/.porthole.toml',
          sha256: 'a'.repeat(64),
          layout: 'dev',
          start: null,
          layouts: [{ layout: 'dev', panes: [{ command: ['/bin/sh', '-c', 'npm run dev'], cwd: '/p/web', split: 'right' }], browsers: [{ port: 5173, url: 'http://localhost:5173/', mode: null }] }],
        },
      },
    ],
    ['project_trust: bad hash', j({ type: 'project_trust', file: '/p/.porthole.toml', sha256: 'xyz', layout: null, layouts: [] }), null],
    ['project_trust: a pane without a command', j({ type: 'project_trust', file: '/p/.porthole.toml', sha256: 'a'.repeat(64), layout: null, layouts: [{ layout: 'x', panes: [{ cwd: '/p' }], browsers: [] }] }), null],
    ['handles: assign an array', j({ type: 'handles', assign: ['b1'] }), null],
    [
      'split',
      j({ type: 'request', id: 4, verb: 'split', near: 'p3', side: 'right', terminal: 't9' }),
      { type: 'request', request: { verb: 'split', id: 4, near: 'p3', side: 'right', terminal: 't9', balance: false } },
    ],
    [
      'split: side null and near missing are null',
      j({ type: 'request', id: 0, verb: 'split', side: null, terminal: 't9' }),
      { type: 'request', request: { verb: 'split', id: 0, near: null, side: null, terminal: 't9', balance: false } },
    ],
    [
      'split: unknown fields are ignored',
      j({ type: 'request', id: 1, verb: 'split', near: 'p1', side: 'down', terminal: 't2', extra: 1 }),
      { type: 'request', request: { verb: 'split', id: 1, near: 'p1', side: 'down', terminal: 't2', balance: false } },
    ],
    [
      'split and open: balance (the caller named neither pane nor side)',
      j({ type: 'request', id: 9, verb: 'split', near: 'p3', side: null, terminal: 't9', balance: true }),
      { type: 'request', request: { verb: 'split', id: 9, near: 'p3', side: null, terminal: 't9', balance: true } },
    ],
    ['split: balance not a boolean', j({ type: 'request', id: 5, verb: 'split', near: 'p3', side: null, terminal: 't9', balance: 1 }), { type: 'unusable', id: 5, message: 'malformed split request: balance is not a boolean' }],
    ['open: balance not a boolean', j({ type: 'request', id: 8, verb: 'open', near: 'p1', url: 'http://a/', mode: 'iframe', handle: 'b4', balance: 'yes' }), { type: 'unusable', id: 8, message: 'malformed open request: balance is not a boolean' }],
    ['split: bad side', j({ type: 'request', id: 5, verb: 'split', near: 'p3', side: 'left', terminal: 't9' }), { type: 'unusable', id: 5, message: 'malformed split request: side is not right, down or null' }],
    ['split: not a terminal id', j({ type: 'request', id: 5, verb: 'split', near: 'p3', side: null, terminal: 'b9' }), { type: 'unusable', id: 5, message: 'malformed split request: terminal is not a terminal id' }],
    ['split: near a number', j({ type: 'request', id: 5, verb: 'split', near: 3, side: null, terminal: 't9' }), { type: 'unusable', id: 5, message: 'malformed split request: near is not a pane id' }],
    [
      'open',
      j({ type: 'request', id: 6, verb: 'open', near: 'p1', url: 'http://localhost:8000/', mode: 'iframe', handle: 'b4' }),
      { type: 'request', request: { verb: 'open', id: 6, near: 'p1', url: 'http://localhost:8000/', mode: 'iframe', handle: 'b4', balance: false, isolated: false } },
    ],
    [
      'open: system with no handle and no near',
      j({ type: 'request', id: 7, verb: 'open', near: null, url: 'https://example.com/', mode: 'system' }),
      { type: 'request', request: { verb: 'open', id: 7, near: null, url: 'https://example.com/', mode: 'system', handle: null, balance: false, isolated: false } },
    ],
    ['open: javascript URL', j({ type: 'request', id: 8, verb: 'open', near: 'p1', url: 'javascript:alert(1)', mode: 'iframe', handle: 'b4' }), { type: 'unusable', id: 8, message: 'malformed open request: url is not an http(s) URL' }],
    ['open: unknown mode', j({ type: 'request', id: 8, verb: 'open', near: 'p1', url: 'http://a/', mode: 'tab', handle: 'b4' }), { type: 'unusable', id: 8, message: 'malformed open request: mode is not iframe, screencast, popout or system' }],
    ['open: terminal handle', j({ type: 'request', id: 8, verb: 'open', near: 'p1', url: 'http://a/', mode: 'iframe', handle: 't4' }), { type: 'unusable', id: 8, message: 'malformed open request: handle is not a browser pane handle' }],
    [
      'pane',
      j({ type: 'request', id: 9, verb: 'pane', pane: 'p2', action: 'zoom' }),
      { type: 'request', request: { verb: 'pane', id: 9, pane: 'p2', action: 'zoom' } },
    ],
    ['pane: unknown action', j({ type: 'request', id: 9, verb: 'pane', pane: 'p2', action: 'toggle' }), { type: 'unusable', id: 9, message: 'malformed pane request: unknown action' }],
    ['pane: pane missing', j({ type: 'request', id: 9, verb: 'pane', action: 'close' }), { type: 'unusable', id: 9, message: 'malformed pane request: pane is not a pane id' }],
    [
      'workspace: remote on a host, with a name',
      j({ type: 'request', id: 11, verb: 'workspace', host: 'me@box:2222', name: 'box' }),
      { type: 'request', request: { verb: 'workspace', id: 11, host: 'me@box:2222', name: 'box' } },
    ],
    [
      'workspace: local, host and name missing are null',
      j({ type: 'request', id: 12, verb: 'workspace' }),
      { type: 'request', request: { verb: 'workspace', id: 12, host: null, name: null } },
    ],
    ['workspace: a host that is an ssh option', j({ type: 'request', id: 13, verb: 'workspace', host: '-oProxyCommand=x', name: null }), { type: 'unusable', id: 13, message: 'malformed workspace request: host is not an ssh host' }],
    ['workspace: a host with a space', j({ type: 'request', id: 13, verb: 'workspace', host: 'a b', name: null }), { type: 'unusable', id: 13, message: 'malformed workspace request: host is not an ssh host' }],
    ['workspace: a host not a string', j({ type: 'request', id: 13, verb: 'workspace', host: 7 }), { type: 'unusable', id: 13, message: 'malformed workspace request: host is not an ssh host' }],
    ['workspace: an empty name', j({ type: 'request', id: 14, verb: 'workspace', host: null, name: ' ' }), { type: 'unusable', id: 14, message: 'malformed workspace request: name is not 1..=64 characters' }],
    ['workspace: a name too long', j({ type: 'request', id: 14, verb: 'workspace', name: 'x'.repeat(65) }), { type: 'unusable', id: 14, message: 'malformed workspace request: name is not 1..=64 characters' }],
    ['request: unknown verb is refused by id', j({ type: 'request', id: 10, verb: 'swap' }), { type: 'unusable', id: 10, message: 'this window does not know the verb "swap"' }],
    ['request: no id', j({ type: 'request', verb: 'pane', pane: 'p2', action: 'close' }), null],
    ['request: negative id', j({ type: 'request', id: -1, verb: 'pane', pane: 'p2', action: 'close' }), null],
    ['request: fractional id', j({ type: 'request', id: 1.5, verb: 'pane', pane: 'p2', action: 'close' }), null],
    ['request: id as a string', j({ type: 'request', id: '1', verb: 'pane', pane: 'p2', action: 'close' }), null],
    ['unknown type ignored', j({ type: 'hello', id: 1 }), null],
    ['no type', j({ id: 1 }), null],
    ['not JSON', '{type', null],
    ['JSON but an array', '[1,2]', null],
    ['JSON null', 'null', null],
  ];
  for (const [name, text, want] of cases) {
    it(name, () => expect(parseInbound(text)).toEqual(want));
  }

  it('drops a message over the size bound unread', () => {
    const big = j({ type: 'handles', assign: {}, pad: 'x'.repeat(UI_MESSAGE_MAX_BYTES) });
    expect(parseInbound(big)).toBeNull();
  });
});

describe('replyTo', () => {
  it('a success names the pane', () => expect(replyTo(3, { pane: 'p9' })).toEqual({ type: 'reply', id: 3, ok: true, pane: 'p9' }));
  it('a system open names no pane', () => expect(replyTo(3, { pane: null })).toEqual({ type: 'reply', id: 3, ok: true, pane: null }));
  it('a refusal carries its reason', () =>
    expect(replyTo(4, { error: new Refused('no room') })).toEqual({ type: 'reply', id: 4, ok: false, code: 'refused', message: 'no room' }));
  it('any error is a refusal with its message', () =>
    expect(replyTo(5, { error: 'boom' })).toEqual({ type: 'reply', id: 5, ok: false, code: 'refused', message: 'boom' }));
  it("a sidecar's error keeps its code, with ssh's stderr when it adds anything", () => {
    expect(replyTo(7, { error: new ApiError(409, 'host_key', 'ssh refused the host key', 'Host key verification failed.\n') })).toEqual({
      type: 'reply',
      id: 7,
      ok: false,
      code: 'host_key',
      message: 'ssh refused the host key\nHost key verification failed.',
    });
    expect(replyTo(8, { error: new ApiError(502, 'remote_unreachable', 'ssh: no such host (x)', 'no such host') })).toEqual({ type: 'reply', id: 8, ok: false, code: 'remote_unreachable', message: 'ssh: no such host (x)' });
  });
  it('an empty message still says something', () =>
    expect(replyTo(6, { error: new Error('') })).toEqual({ type: 'reply', id: 6, ok: false, code: 'refused', message: 'the window could not do it' }));
});
