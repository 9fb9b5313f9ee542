#!/usr/bin/env python3
"""A CPU stand-in for kevo-runner, speaking its protocol (fds 3 arena, 4 requests, 5 replies), so
the checker's decisions can be tested without a GPU. It computes y = 2x for the scale2 task. Each
loaded library behaves as its embedded marker string says ("fake-runner: BEHAVIOUR")."""
import array
import os, json, math, mmap, os, re, signal, struct, sys, tempfile, time

req, rep = os.fdopen(4, 'rb', buffering=0), os.fdopen(5, 'wb', buffering=0)
if os.environ.get('KEVO_FAKE_RUNNER_LOG'):  # tests count the runner processes an eval starts
    with open(os.environ['KEVO_FAKE_RUNNER_LOG'], 'a') as f:
        f.write('start %d\n' % os.getpid())
slots = {}      # slot -> behaviour
calls = {}      # slot -> number of run calls
state = {}      # slot -> data remembered between calls (for the cache hack)


bufs = {}      # "device" buffers of the device-data protocol: key -> array('f')
M64 = (1 << 64) - 1


def mix(x):
    x = (x + 0x9e3779b97f4a7c15) & M64
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M64
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M64
    return x ^ (x >> 31)


def unit(k):
    return ((mix(k & M64) >> 11) + 0.5) * 2.0 ** -53


M32 = (1 << 32) - 1


def hash32(x):
    """task/draw.h's draw_hash32."""
    x ^= x >> 16
    x = (x * 0x7feb352d) & M32
    x ^= x >> 15
    x = (x * 0x846ca68b) & M32
    return x ^ (x >> 16)


def key32(key, i):
    """task/draw.h's draw_key32."""
    return hash32((i & M32) ^ hash32(((i >> 32) & M32) ^ ((key >> 32) & M32)) ^ (key & M32))


def timed_value(g, i):
    """task/draw.h's draw_timed_value (normal, uniform and int: what the fakes' tasks use)."""
    kind, a, b = g['kind'], g['a'], g['b']
    h1 = key32(g['base'], i)
    h2 = hash32(h1 ^ 0x9e3779b9)
    if kind in (0, 4):
        total = (h1 & 0xffff) + (h1 >> 16) + (h2 & 0xffff) + (h2 >> 16)
        v = a + b * ((total - 131070) * (1.7320508075688772 / 65536.0))
        return v if kind == 0 else math.exp(v)
    u = ((h1 >> 8) + 0.5) * 2.0 ** -24
    if kind == 1:
        return (a - b) + (2 * b) * u
    if kind == 2:
        x = u - 0.5
        return a - b * (-1 if x < 0 else 1) * math.log(1 - 2 * abs(x))
    if kind == 3:
        return -math.log(u) / a
    return g['lo'] + ((h1 << 32) | h2) % (g['hi'] - g['lo'])


def draw(g, n):
    """task/draw.h's draw_value, element for element (f32 tensors only)."""
    out = array.array('f', bytes(4 * n))
    kind, a, b, base = g['kind'], g['a'], g['b'], g['base']
    if g.get('timed'):
        for i in range(n):
            out[i] = timed_value(g, i)
        return out
    for i in range(n):
        if kind in (0, 4):
            k = base + 2 * (i // 2)
            r, t = math.sqrt(-2 * math.log(unit(k))), 2 * math.pi * unit(k + 1)
            z = r * math.cos(t) if i % 2 == 0 else r * math.sin(t)
            v = a + b * z if kind == 0 else math.exp(a + b * z)
        else:
            u = unit(base + 2 * i)
            if kind == 1:
                v = a - b + 2 * b * u
            elif kind == 2:
                x = u - 0.5
                v = a - b * (-1 if x < 0 else 1) * math.log(1 - 2 * abs(x))
            elif kind == 3:
                v = -math.log(u) / a
            else:
                v = g['lo'] + mix((base + 2 * i) & M64) % (g['hi'] - g['lo'])
        out[i] = v
    return out


lent = {}      # xfer/ key -> its "IPC" file (materialize lends them, collect takes them back)
exported = []  # every "IPC" file this process made, removed when the checker closes the channel


IPC_PREFIX = 'kevo-fake-ipc-'


def sweep_dead():
    """Removes the stand-in files of fake runners that were killed (they cannot clean up): the
    files carry their maker's pid."""
    d = tempfile.gettempdir()
    for name in os.listdir(d):
        m = re.match(re.escape(IPC_PREFIX) + r'(\d+)-', name)
        if not m:
            continue
        try:
            os.kill(int(m.group(1)), 0)
        except ProcessLookupError:
            try:
                os.remove(os.path.join(d, name))
            except OSError:
                pass
        except PermissionError:
            pass


sweep_dead()


def export(key):
    """A stand-in for a CUDA IPC handle: the buffer's bytes in a file the other process reads (and,
    for buffers lent by materialize, writes)."""
    fd, path = tempfile.mkstemp(prefix='%s%d-' % (IPC_PREFIX, os.getpid()))
    os.write(fd, bufs[key].tobytes())
    os.close(fd)
    exported.append(path)
    return path


def release(prefix):
    for k in [k for k in bufs if k.startswith(prefix)]:
        del bufs[k]
    for k in [k for k in lent if k.startswith(prefix)]:
        os.remove(lent.pop(k))


def ipc(path, offset=0):
    """run/protocol.h's IpcBuffer: the allocation's handle and the buffer's offset in it."""
    return {'handle': path, 'offset': offset}


def out_of_bounds(ref, nbytes):
    """What the real oracle's runner says of a reference outside its allocation ('' if inside)."""
    size = os.path.getsize(ref['handle'])
    if ref['offset'] + nbytes > size:
        return '%d bytes at offset %d of an allocation of %d' % (nbytes, ref['offset'], size)
    return ''


def opened(ref):
    a = array.array('f')
    with open(ref['handle'], 'rb') as f:
        f.seek(ref['offset'])
        a.frombytes(f.read())
    return a


def compare(got, want, atol, rtol, check_poison):
    """check/compare.cpp's semantics."""
    fin = [w for w in want if math.isfinite(w)]
    scale = max(1.0, math.sqrt(sum(w * w for w in fin) / len(fin)) if fin else 1.0)
    at = atol * scale
    raw = got.tobytes()
    c = {'count': len(got), 'mismatches': 0, 'unwritten': 0, 'nonfinite': 0, 'first_bad': -1,
         'first_got': 0.0, 'first_want': 0.0, 'max_abs_err': 0.0, 'max_rel_err': 0.0}
    for i, (g, w) in enumerate(zip(got, want)):
        poison = raw[4 * i:4 * i + 4] == b'\xff' * 4
        bad = False
        if not math.isfinite(w):
            bad = not (math.isnan(g) if math.isnan(w) else g == w)
        elif not math.isfinite(g):
            bad = True
            c['unwritten' if check_poison and poison else 'nonfinite'] += 1
        else:
            err = abs(g - w)
            c['max_abs_err'] = max(c['max_abs_err'], err)
            if err > 0:
                c['max_rel_err'] = max(c['max_rel_err'], err / max(abs(w), 1e-30))
            bad = err > at + rtol * abs(w)
            if bad and check_poison and poison:
                c['unwritten'] += 1
        if bad:
            if c['mismatches'] == 0:
                c['first_bad'], c['first_got'], c['first_want'] = i, g, w
            c['mismatches'] += 1
    for k in ('first_got', 'first_want', 'max_abs_err', 'max_rel_err'):  # JSON has no NaN/Inf
        if not math.isfinite(c[k]):
            c[k] = 'nan' if math.isnan(c[k]) else ('inf' if c[k] > 0 else '-inf')
    return c


def send(obj):
    b = json.dumps(obj).encode()
    rep.write(struct.pack('<I', len(b)) + b)


def arena(size):
    return mmap.mmap(3, size) if size else None


def floats(m, d):
    return memoryview(m)[d['offset']:d['offset'] + d['nbytes']].cast('f')


def compute(b, x, y, placement, poison):
    n = len(x)
    if b == 'noop':
        return
    for i in range(n):
        y[i] = 2.0 * x[i]
    if b == 'wrong':
        y[0] += 1.0
    if b == 'wrong_late' and n > 1:
        y[n - 2] += 1.0
    if b == 'nondet' and placement == 1:
        y[n // 2] += 0.5


def run_device(msg):
    """run with the device-data protocol: inputs drawn here, outputs kept, "IPC" files exported."""
    slot = msg['slot']
    b = slots[slot]
    calls[slot] = calls.get(slot, 0) + 1
    pfx = slot + ('/moved/' if msg.get('placement', 0) else '/')
    d_in, d_out = msg['inputs'][0], msg['outputs'][0]
    x = draw(d_in['gen'], d_in['nbytes'] // 4)
    bufs[pfx + 'in/' + d_in['name']] = x
    n = d_out['nbytes'] // 4
    pb = b'\xff' if msg.get('poison', 0) == 0 else b'\x7f'
    y = array.array('f')
    y.frombytes(pb * (4 * n))
    bufs[pfx + 'out/' + d_out['name']] = y
    if b in FATAL:
        return behave_fatal(b)
    if b == 'cache':
        key = d_in['nbytes']
        if key not in state:
            compute('pass', x, y, 0, 0)
            state[key] = y.tobytes()
        y[:] = array.array('f', state[key])
    elif b == 'partial':
        compute('pass', x, y, 0, 0)
        y[n - 1] = struct.unpack('<f', pb * 4)[0]
    else:
        compute(b, x, y, msg.get('placement', 0), 0)
    if b == 'mutate':
        x[0] = 1.0
    viol = []
    if b == 'foreign_stream':
        viol.append({'kind': 'foreign_stream', 'detail': 'kernel launched via <<<>>> on stream (nil)'})
    reply = {'ok': True, 'rc': 3 if b == 'rc' else 0, 'span_ms': 1.0,
             'wall_ms': 1.1 if b != 'hidden' else 9.0,
             'after_stream_ms': 0.05 if b != 'hidden' else 7.5,
             'after_stream_cpu_ms': 0.05 if b != 'hidden' else 7.4,
             'threads_before': 3, 'threads_after': 4 if b == 'thread' else 3,
             'launch_error': '', 'violations': viol}
    if msg.get('export'):
        # bad_offset: a runner that names a buffer past the end of the allocation it exported
        reply['outputs_ipc'] = [ipc(export(pfx + 'out/' + d_out['name']), 1 << 40 if b == 'bad_offset' else 0)]
        reply['inputs_ipc'] = [ipc(export(pfx + 'in/' + d_in['name']))]
    if b == 'exit_after':  # ends the process right after replying: its buffers (files) go with it
        state['exit_after'] = [r['handle'] for r in reply.get('outputs_ipc', []) + reply.get('inputs_ipc', [])]
    return reply


# The fatal CUDA errors a behaviour reports: kevo-runner's reply carries the cudaError_t number;
# 'old_fatal' is a runner before that field, whose message alone must not decide the reason.
ILLEGAL = 'cudaStreamSynchronize(stream_): cudaErrorIllegalAddress: an illegal memory access was encountered'
FATAL_CUDA = {
    'illegal_address': (700, ILLEGAL),
    'launch_failure': (719, 'cudaStreamSynchronize(stream_): cudaErrorLaunchFailure: unspecified launch failure'),
    'old_fatal': (None, ILLEGAL),
}
FATAL = ('segfault', 'abort', 'exit_zero', 'hang') + tuple(FATAL_CUDA)


def behave_fatal(b):
    """The behaviours that end the process (or never answer), the same on both data paths."""
    if b == 'segfault':
        os.kill(os.getpid(), signal.SIGSEGV)
    if b == 'abort':
        os.kill(os.getpid(), signal.SIGABRT)
    if b == 'exit_zero':
        os._exit(0)
    if b == 'hang':
        time.sleep(600)
    number, error = FATAL_CUDA[b]
    reply = {'ok': False, 'fatal': True, 'error': error}
    if number is not None:
        reply['cuda_error'] = number
    send(reply)
    os._exit(4)


def call_base(base, call):
    """task/draw.h's draw_call_base: the key of element 0 in timed call `call`."""
    return mix((base ^ mix((call + 1) & M64)) & M64)


def sign(key, i, which):
    """task/draw.h's draw_sign."""
    return 1.0 if (key32(key, i) >> which) & 1 else -1.0


SUMS_PREFIX = 64  # the fake summarises a prefix (a full draw per call in Python would take ms)


def sums_of(y, key, n):
    s = {'count': n, 'nonfinite': 0, 'sum_sq': 0.0, 'signed0': 0.0, 'signed1': 0.0}
    for i, v in enumerate(y[:SUMS_PREFIX]):
        if not math.isfinite(v):
            s['nonfinite'] += 1
            continue
        s['sum_sq'] += v * v
        s['signed0'] += sign(key, i, 0) * v
        s['signed1'] += sign(key, i, 1) * v
    return s


def dev_state(changed):
    return [['limit_persisting_l2', 4194304 if changed else 0], ['stream_window_bytes', 0]]


def time_batch(msg):
    """A timed batch: wall time spent by sleeping (kernel 10 ms for the candidate, 20 ms for the
    baseline, 3 ms of work around each call), events as each behaviour reports them."""
    slot, n, first = msg['slot'], msg['calls'], msg['first_call']
    b = slots.get(slot, 'pass') if slot else 'none'
    d_in, d_out = msg['inputs'][0], msg['outputs'][0]
    numel = d_out['nbytes'] // 4
    # Milliseconds large enough that a loaded CI machine's scheduling jitter stays small beside them.
    kernel = 0.0 if not slot else (10.0 if slot == 'cand' else 20.0)
    if b == 'too_fast':
        kernel = 1e-6
    if b == 'slow':  # an honest kernel slower than the baseline: 0.667x
        kernel = 30.0
    reported = kernel / 4 if b == 'forged' else kernel
    # Like a GPU, the batch's wall time is the device's, not the host's work beside it: the draws
    # and sums below run first and the sleep tops the batch up to its deadline, so a loaded CI
    # machine's slow Python does not turn into timing noise (it would hide a forger's shortfall).
    # A fixed 80 ms per batch and 3 ms per call, the same in every series, cover the host work
    # below (each call's prefix, the last call's full draw, the exported buffer's update) even for
    # a candidate whose kernel takes no time: work spilling past the deadline in one series and
    # not in the trusted one (the baseline's 20 ms kernels leave room) would read as hidden work
    # (check/outside_clock.h).
    deadline = time.monotonic() + (80.0 + n * (kernel + 3.0)) / 1000.0
    if b in ('one_call_cheap', 'stall_then_retimed') and n == 1:
        # Like bias_scale's baseline on an H100: an honest kernel whose one-call batches cost less
        # outside its events than the trusted runner's (12 ms here), which one-call batching misreads.
        # stall_then_retimed's 40 ms (5.7 ms per call over its 1/8-call batches) sits beyond any
        # allowance a loaded host's noise leaves below half the figure, so its first session is
        # timed again however noisy the host (12 ms was within a CI host's noise: agreed, not retimed).
        deadline -= 0.040 if b == 'stall_then_retimed' else 0.012
    if b in ('stall_once', 'stall_then_retimed') and n > 1:
        # One GPU-wide stall in the candidate's second large batch, as some H100 hosts show: 40 ms
        # (with stall_then_retimed, in the first session, which is then timed again).
        state['large_batches'] = state.get('large_batches', 0) + 1
        if state['large_batches'] == 2:
            deadline += 0.040
    key = msg['sums_key']
    rows = []
    for i in range(n):
        g = dict(d_in['gen'], base=call_base(d_in['gen']['base'], first + i), timed=True)
        if b == 'timed_cache' and 'cached' in state:
            x = state['cached']
        else:
            full = i == n - 1 and slot != ''  # the last call's output may be compared in full
            x = draw(g, numel if full else min(SUMS_PREFIX, numel))
            if b == 'timed_cache':
                state['cached'] = draw(g, numel)
                x = state['cached']
        y = array.array('f', bytes(4 * len(x)))
        if slot:
            compute('pass', x, y, 0, 0)
        else:
            y = array.array('f', [float('nan')] * len(x))
        rows.append([sums_of(y, key, numel)])
    pfx = 'tb/' + (slot or 'none') + '/out/'
    bufs[pfx + d_out['name']] = y
    if not msg.get('export_outputs') and slot in state.get('tb_exported', {}):
        with open(state['tb_exported'][slot], 'wb') as f:  # the "IPC handle" shows the buffer as it is now
            f.write(y.tobytes())
    time.sleep(max(0.0, deadline - time.monotonic()))
    reply = {'ok': True, 'call_ms': [reported] * n, 'flush_ms': [0.05] * n, 'sums': rows, 'rc': [0] * n,
             'launch_error': '', 'span_ms': n * (kernel + 3.0), 'after_stream_ms': 0.02, 'after_stream_cpu_ms': 0.02,
             'threads_before': 3, 'threads_after': 3, 'violations': [], 'outputs_ipc': []}
    if msg.get('export_outputs'):
        reply['outputs_ipc'] = [ipc(export(pfx + d_out['name']))]
        state.setdefault('tb_exported', {})[slot] = reply['outputs_ipc'][0]['handle']
    if msg.get('state'):
        reply['state_before'] = state_of(b, False)
        reply['state_after'] = state_of(b, True)
    return reply


def state_of(b, after):
    return dev_state(b == 'state' and after)



confined_path = None


def handle(msg):
    cmd = msg['cmd']
    if cmd == 'hello':
        # A GPU chosen through CUDA_VISIBLE_DEVICES is another device, as on a real host.
        cvd = os.environ.get('CUDA_VISIBLE_DEVICES', '')
        return {'ok': True, 'name': 'Fake GPU', 'uuid': 'fake-uuid' + ('-' + cvd if cvd else ''), 'cc_major': 9, 'cc_minor': 0,
                'sm_count': 1, 'l2_bytes': 1 << 20, 'total_mem': 1 << 30, 'free_mem': 1 << 30,
                'runtime_version': 13000, 'driver_version': 13000}
    if cmd == 'confine':  # a stand-in confines nothing, and says so (the checker reads /proc too)
        global confined_path
        confined_path = msg['path']
        return {'ok': True, 'isolation': {'uid': os.geteuid(), 'gid': os.getegid(), 'seccomp': False,
                                          'error': 'a stand-in runner'},
                'state': dev_state(False)}
    if cmd == 'load':
        if msg.get('untrusted') and confined_path != msg['path']:
            return {'ok': False, 'error': 'an untrusted library is loaded only after confine, of the same path'}
        data = open(msg['path'], 'rb').read()
        m = re.search(rb'fake-runner: ([a-z_]+)', data)
        behaviour = m.group(1).decode() if m else 'pass'
        slots[msg['slot']] = behaviour
        before = len(os.listdir('/proc/self/task'))
        if behaviour == 'load_thread':  # a static constructor that starts a host thread
            import threading
            threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
        return {'ok': True, 'threads_before': before, 'threads_after': len(os.listdir('/proc/self/task'))}
    if cmd == 'bandwidth':
        return {'ok': True, 'copy_gbps': 1000.0, 'copy_gbps_median': 1000.0}
    if cmd == 'probe':
        return {'ok': True, 'tflops': {'0': 10.0, '1': 100.0}}
    if cmd == 'run' and msg.get('keep'):
        return run_device(msg)
    if cmd == 'materialize':  # inputs drawn into base/in; copies and poisoned outputs lent under xfer/
        release('xfer/')
        ii, oi = [], []
        for d in msg.get('inputs', []):
            x = draw(d['gen'], d['nbytes'] // 4)
            bufs['base/in/' + d['name']] = x
            bufs['xfer/in/' + d['name']] = array.array('f', x)
            lent['xfer/in/' + d['name']] = export('xfer/in/' + d['name'])
            ii.append(lent['xfer/in/' + d['name']])
        for d in msg.get('outputs', []):
            y = array.array('f')
            y.frombytes(b'\xff' * d['nbytes'])
            bufs['xfer/out/' + d['name']] = y
            lent['xfer/out/' + d['name']] = export('xfer/out/' + d['name'])
            oi.append(lent['xfer/out/' + d['name']])
        return {'ok': True, 'inputs_ipc': ii, 'outputs_ipc': oi}
    if cmd == 'collect':  # what the other process wrote becomes base/out; the lent files go
        for d in msg.get('outputs', []):
            y = opened(ipc(lent['xfer/out/' + d['name']]))
            if len(y) * 4 != d['nbytes']:
                release('xfer/')
                return {'ok': False, 'error': 'collect: wrong size of ' + d['name']}
            bufs['base/out/' + d['name']] = y
        release('xfer/')
        return {'ok': True}
    if cmd == 'release':
        for p in msg.get('prefixes', []):
            release(p)
        return {'ok': True}
    if cmd == 'compare':
        outs, ins = [], []
        for d in msg.get('outputs', []) + msg.get('inputs', []):
            why = out_of_bounds(d['ipc'], d['nbytes'])
            if why:
                return {'ok': True, 'outputs': [], 'inputs': [], 'out_of_bounds': why}
        for d in msg.get('outputs', []):
            got = opened(d['ipc'])
            o = {'cmp': compare(got, bufs[d['ref']], msg['atol'], msg['rtol'], d.get('check_poison', True))}
            if 'runs_ref' in d:
                o['runs'] = compare(got, bufs[d['runs_ref']], msg['atol'], msg['rtol'], False)
            if 'snapshot' in d:
                bufs[d['snapshot']] = got
            outs.append(o)
        for d in msg.get('inputs', []):
            a, b = opened(d['ipc']).tobytes(), bufs[d['ref']].tobytes()
            ins.append({'differing_bytes': sum(x != y for x, y in zip(a, b))})
        return {'ok': True, 'outputs': outs, 'inputs': ins}
    if cmd == 'run':
        b = slots[msg['slot']]
        calls[msg['slot']] = calls.get(msg['slot'], 0) + 1
        m = arena(msg['arena_size'])
        x = floats(m, msg['inputs'][0])
        y = floats(m, msg['outputs'][0])
        poison = msg.get('poison', 0)
        pb = b'\xff' if poison == 0 else b'\x7f'
        o = msg['outputs'][0]
        m[o['offset']:o['offset'] + o['nbytes']] = pb * o['nbytes']
        if b in FATAL:
            behave_fatal(b)
        if b == 'cache':
            key = msg['inputs'][0]['nbytes']
            if key in state:
                y[:] = memoryview(state[key]).cast('f')
            else:
                compute('pass', x, y, 0, poison)
                state[key] = bytes(y.cast('B'))
                y[:] = memoryview(state[key]).cast('f')
        elif b == 'partial':
            compute('pass', x, y, 0, poison)
            o = msg['outputs'][0]
            end = o['offset'] + o['nbytes']
            m[end - 4:end] = pb * 4  # the last element is never written
        else:
            compute(b, x, y, msg.get('placement', 0), poison)
        if b == 'mutate' and 'inputs_after' in msg:
            for d in msg['inputs_after']:
                m[d['offset']:d['offset'] + d['nbytes']] = m[msg['inputs'][0]['offset']:msg['inputs'][0]['offset'] + d['nbytes']]
                m[d['offset']:d['offset'] + 4] = b'\x00\x00\x80\x3f'
        elif 'inputs_after' in msg:
            for d, s in zip(msg['inputs_after'], msg['inputs']):
                m[d['offset']:d['offset'] + d['nbytes']] = m[s['offset']:s['offset'] + s['nbytes']]
        viol = []
        if b == 'foreign_stream':
            viol.append({'kind': 'foreign_stream', 'detail': 'kernel launched via <<<>>> on stream (nil)'})
        if b == 'exit_after':
            state['exit_after'] = []
        reply = {'ok': True, 'rc': 3 if b == 'rc' else 0, 'span_ms': 1.0,
                 'wall_ms': 1.1 if b != 'hidden' else 9.0,
                 'after_stream_ms': 0.05 if b != 'hidden' else 7.5,
                 'threads_before': 3, 'threads_after': 4 if b == 'thread' else 3,
                 'launch_error': '', 'violations': viol}
        del x, y
        m.close()
        return reply
    if cmd == 'time_batch':
        if os.environ.get('KEVO_FAKE_RUNNER_BATCHES'):  # tests check what a batch tells its runner
            with open(os.environ['KEVO_FAKE_RUNNER_BATCHES'], 'a') as f:
                f.write('%s %d %d\n' % (msg.get('slot') or '-', msg['first_call'], msg['inputs'][0]['gen']['base']))
        return time_batch(msg)
    return {'ok': False, 'error': 'unknown command ' + cmd}


while True:
    n = req.read(4)
    if len(n) < 4:
        for f in exported:
            if os.path.exists(f):
                os.remove(f)
        sys.exit(0)
    msg = json.loads(req.read(struct.unpack('<I', n)[0]))
    if os.environ.get('KEVO_FAKE_RUNNER_CMDS'):  # tests check which commands an eval sends
        with open(os.environ['KEVO_FAKE_RUNNER_CMDS'], 'a') as f:
            f.write('%d %s\n' % (os.getpid(), msg.get('cmd')))
    reply = handle(msg)
    if msg.get('cmd') == 'run' and slots.get(msg.get('slot')) == 'garbled':
        reply['rc'] = 'zero'  # not the protocol's type: a candidate that tampered with its runner
    if 'exit_after' in state:  # gone before anyone can open its buffers (deterministic for tests)
        for f in state['exit_after']:
            os.remove(f)
        send(reply)
        os._exit(0)
    send(reply)
