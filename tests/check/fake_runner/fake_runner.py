#!/usr/bin/env python3
"""A CPU stand-in for kevo-runner, speaking its protocol (fds 3 arena, 4 requests, 5 replies), so
the checker's decisions can be tested without a GPU. It computes y = 2x for the scale2 task. Each
loaded library behaves as its embedded marker string says ("fake-runner: BEHAVIOUR")."""
import json, mmap, os, re, signal, struct, sys, time

req, rep = os.fdopen(4, 'rb', buffering=0), os.fdopen(5, 'wb', buffering=0)
slots = {}      # slot -> behaviour
calls = {}      # slot -> number of run calls
state = {}      # slot -> data remembered between calls (for the cache hack)


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
    if b == 'nondet' and placement == 1:
        y[n // 2] += 0.5


def handle(msg):
    cmd = msg['cmd']
    if cmd == 'hello':
        return {'ok': True, 'name': 'Fake GPU', 'uuid': 'fake-uuid', 'cc_major': 9, 'cc_minor': 0,
                'sm_count': 1, 'l2_bytes': 1 << 20, 'total_mem': 1 << 30, 'free_mem': 1 << 30,
                'runtime_version': 13000, 'driver_version': 13000}
    if cmd == 'load':
        data = open(msg['path'], 'rb').read()
        m = re.search(rb'fake-runner: ([a-z_]+)', data)
        slots[msg['slot']] = m.group(1).decode() if m else 'pass'
        return {'ok': True}
    if cmd == 'bandwidth':
        return {'ok': True, 'copy_gbps': 1000.0, 'copy_gbps_median': 1000.0}
    if cmd == 'probe':
        return {'ok': True, 'tflops': {'0': 10.0, '1': 100.0}}
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
        if b == 'segfault':
            os.kill(os.getpid(), signal.SIGSEGV)
        if b == 'abort':
            os.kill(os.getpid(), signal.SIGABRT)
        if b == 'exit_zero':
            os._exit(0)
        if b == 'hang':
            time.sleep(600)
        if b == 'illegal_address':
            send({'ok': False, 'fatal': True,
                  'error': 'cudaStreamSynchronize(stream_): cudaErrorIllegalAddress: an illegal memory access was encountered'})
            os._exit(4)
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
        reply = {'ok': True, 'rc': 3 if b == 'rc' else 0, 'span_ms': 1.0,
                 'wall_ms': 1.1 if b != 'hidden' else 9.0,
                 'after_stream_ms': 0.05 if b != 'hidden' else 7.5,
                 'threads_before': 3, 'threads_after': 4 if b == 'thread' else 3,
                 'launch_error': '', 'violations': viol}
        del x, y
        m.close()
        return reply
    if cmd == 'time':
        m = arena(msg['arena_size'])
        samples = {}
        for s in msg['slots']:
            b = slots[s]
            t = 0.5 if s == 'cand' else 1.0
            if b == 'too_fast':
                t = 1e-6
            samples[s] = [t * (1 + 0.001 * (i % 5)) for i in range(40)]
            fin = floats(m, msg['final'][0])
            out = floats(m, msg['outputs'][s][0])
            if b == 'timed_cache':
                for i in range(len(out)):
                    out[i] = 1.0
            else:
                compute('pass', fin, out, 0, 0)
            del fin, out
        m.close()
        return {'ok': True, 'samples': samples,
                'batches': [{'wall_ms': 20.0, 'span_ms': 19.5, 'after_stream_ms': 0.02, 'calls': 20}],
                'final_ms': {s: 1.0 for s in msg['slots']}, 'rc': {},
                'threads_before': 3, 'threads_max': 3, 'violations': []}
    return {'ok': False, 'error': 'unknown command ' + cmd}


while True:
    n = req.read(4)
    if len(n) < 4:
        sys.exit(0)
    msg = json.loads(req.read(struct.unpack('<I', n)[0]))
    send(handle(msg))
