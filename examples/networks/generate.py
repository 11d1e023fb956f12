#!/usr/bin/env python3
"""Writes the example networks: one directory per network with net.plist, its
weight files, sample inputs (inputs/<name>.npy, float16) and the outputs the
network's math gives for them (expected/<output>.npy, float32: float64 math,
rounded to fp16 wherever a task writes memory, the true sigmoid). Everything is
deterministic (fixed formulas, no randomness), so running this again
reproduces the committed files exactly.

    python3 examples/networks/generate.py      (from the repository root)
"""
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def fp16_bits(x):
    return struct.unpack('<H', struct.pack('<e', x))[0]


def ramp(count, step, lo, hi):
    """count values stepping through lo, lo+step, ... wrapping inside [lo, hi]:
    all are multiples of `step`, exactly representable in fp16 and fp32."""
    n = int(round((hi - lo) / step)) + 1
    return [lo + ((i * 7) % n) * step for i in range(count)]


def f16(x):
    """x rounded to the nearest fp16 (ties to even), as a Python float."""
    return struct.unpack('<e', struct.pack('<e', x))[0]


def write_npy(path, shape, values, descr='<f2'):
    """A version 1.0 .npy file, C order, header padded to 64 bytes as numpy writes it."""
    dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    fmt = {'<f2': '<e', '<f4': '<f'}[descr]
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(b''.join(struct.pack(fmt, v) for v in values))


def write_weights(path, values, kind):
    with open(path, 'wb') as f:
        for v in values:
            f.write(struct.pack('<e', v) if kind == 'Float16' else struct.pack('<f', v))


def key(k, v, ind):
    pad = '\t' * ind
    return f'{pad}<key>{k}</key>\n{value(v, ind)}'


def value(v, ind):
    pad = '\t' * ind
    if isinstance(v, bool):
        return f'{pad}<{"true" if v else "false"}/>\n'
    if isinstance(v, int):
        return f'{pad}<integer>{v}</integer>\n'
    if isinstance(v, str):
        return f'{pad}<string>{v}</string>\n'
    if isinstance(v, list):
        return f'{pad}<array>\n' + ''.join(value(e, ind + 1) for e in v) + f'{pad}</array>\n'
    if isinstance(v, dict):
        return f'{pad}<dict>\n' + ''.join(key(k, e, ind + 1) for k, e in v.items()) + f'{pad}</dict>\n'
    raise TypeError(v)


def plist(net, comment):
    body = value({'Networks': ['net'], 'Version': '1.0.9', 'net': net}, 0)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
            f'<!-- {comment} -->\n<plist version="1.0">\n{body}</plist>\n')


def inp(c, w, h=1):
    return {'InputChannels': c, 'InputHeight': h, 'InputWidth': w, 'InputType': 'Float16'}


def conv(bottom, cout, ktype='Float16', index=0, offset=0, k=1, step=1, pads=(0, 0, 0, 0), groups=None):
    """A Conv unit; pads = (top, bottom, left, right)."""
    u = {'Bottom': bottom, 'Name': None, 'OutputChannels': cout, 'OutputType': 'Float16', 'Type': 'Conv',
         'Params': {'KernelWidth': k, 'KernelHeight': k, 'KernelIndex': index, 'KernelOffset': offset,
                    'KernelType': ktype, 'Step': [step, step], 'Type': 'Conv'}}
    if any(pads):
        u['Params'].update({'PadTop': pads[0], 'PadBot': pads[1], 'PadLeft': pads[2], 'PadRight': pads[3]})
    if groups is not None:
        u['NumGroups'] = groups
    return u


def unit(bottom, utype, params=None):
    u = {'Bottom': bottom, 'Name': None, 'OutputType': 'Float16', 'Type': utype}
    if params is not None:
        u['Params'] = params
    return u


def out(bottom):
    return {'Bottom': bottom, 'OutputType': 'Float16'}


def network(name, inputs, units, outputs, weights, comment, input_values=None):
    net = {'Inputs': list(inputs), 'Outputs': [o + '@output' for o in outputs], 'Units': list(units)}
    if weights:
        net['Weights'] = [w for w, _, _ in weights]
    for k, v in inputs.items():
        net[k] = v
    for k, v in units.items():
        v = dict(v)
        v['Name'] = k
        net[k] = v
    for o in outputs:
        net[o + '@output'] = out(o)
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, 'inputs'), exist_ok=True)
    os.makedirs(os.path.join(d, 'expected'), exist_ok=True)
    with open(os.path.join(d, 'net.plist'), 'w') as f:
        f.write(plist(net, comment))
    for fname, values, kind in weights:
        write_weights(os.path.join(d, fname), values, kind)
    # Sample inputs and the outputs the network's math gives for them.
    tensors = {}
    for i, (k, v) in enumerate(inputs.items()):
        c, h, w = v['InputChannels'], v['InputHeight'], v['InputWidth']
        values = input_values.get(k) if input_values else None
        if values is None:
            values = [x * (1 if i % 2 == 0 else -1) for x in ramp(c * h * w, 0.25, -2.0, 2.0)]
        tensors[k] = (c, h, w, values)
        write_npy(os.path.join(d, 'inputs', k + '.npy'), (1, c, h, w), tensors[k][3])
    evaluate(units, weights, tensors)
    for o in outputs:
        c, h, w, vals = tensors[o]
        write_npy(os.path.join(d, 'expected', o + '@output.npy'), (1, c, h, w), vals, '<f4')


def weight_values(weights, index, offset):
    _, values, kind = weights[index]
    return values[offset // (2 if kind == 'Float16' else 4):]


def fp32_sum(terms):
    """The terms summed in fp32, in order, and whether that equals the exact
    sum: the examples keep every sum exact, so no accumulation order matters."""
    acc = 0.0
    for t in terms:
        acc = struct.unpack('<f', struct.pack('<f', acc + t))[0]
    return acc, acc == math.fsum(terms)


def conv_values(u, p, x, c, h, w, weights):
    """A convolution by its definition: kernel k x k, stride s, leading pads
    PadTop/PadLeft (outside the input counts as 0), NumGroups groups."""
    k, s = p['KernelWidth'], p['Step'][0]
    top, left = p.get('PadTop', 0), p.get('PadLeft', 0)
    cout, groups = u['OutputChannels'], u.get('NumGroups', 1)
    hout = (h + top + p.get('PadBot', 0) - k) // s + 1
    wout = (w + left + p.get('PadRight', 0) - k) // s + 1
    kern = weight_values(weights, p['KernelIndex'], p['KernelOffset'])
    cin_g, cout_g = c // groups, cout // groups
    acc = []
    for oc in range(cout):
        g = oc // cout_g
        for oy in range(hout):
            for ox in range(wout):
                terms = []
                for i in range(cin_g):
                    for ky in range(k):
                        for kx in range(k):
                            iy, ix = oy * s + ky - top, ox * s + kx - left
                            if 0 <= iy < h and 0 <= ix < w:
                                wv = kern[((oc * cin_g + i) * k + ky) * k + kx]
                                terms.append(wv * x[((g * cin_g + i) * h + iy) * w + ix])
                total, exact = fp32_sum(terms)
                assert exact, 'an example sum is not exact in fp32'
                acc.append(total)
    return cout, hout, wout, acc


def evaluate(units, weights, tensors):
    """The layers' math in float64, rounded to fp16 where each task writes memory
    (a Conv with a fused GOC rounds once, after the bias; a fused ReLU changes
    nothing: max(round(v), 0) = round(max(v, 0)))."""
    unrounded = {}
    for name, u in units.items():
        bottoms = u['Bottom'] if isinstance(u['Bottom'], list) else [u['Bottom']]
        src = [tensors[b] if b in tensors else None for b in bottoms]
        t, p = u['Type'], u.get('Params', {})
        if t == 'Conv':
            c, h, w, x = src[0]
            cout, hout, wout, acc = conv_values(u, p, x, c, h, w, weights)
            unrounded[name] = (cout, hout, wout, acc)
            tensors[name] = (cout, hout, wout, [f16(v) for v in acc])
        elif t == 'GOC':
            g = p['BiasScaleGroupData']
            c, h, w, acc = unrounded[bottoms[0]]
            b = weight_values(weights, g['BiasIndex'], g['BiasOffset'])
            tensors[name] = (c, h, w, [f16(acc[i] + b[i // (h * w)]) for i in range(c * h * w)])
        elif t == 'Neuron' and p['Type'] == 'ReLU':
            c, h, w, x = src[0]
            tensors[name] = (c, h, w, [max(v, 0.0) for v in x])
        elif t == 'Neuron' and p['Type'] == 'Sigmoid':
            c, h, w, x = src[0]
            tensors[name] = (c, h, w, [f16(1 / (1 + math.exp(-v))) for v in x])
        elif t == 'Concat':
            tensors[name] = (sum(s[0] for s in src), src[0][1], src[0][2], [v for s in src for v in s[3]])
        elif t == 'Reshape':
            tensors[name] = src[0]
        elif t in ('ScaledElementWise', 'ElementWise'):
            (c, h, w, a), (_, _, _, b) = src
            op = (lambda x, y: x + y) if p['Type'] == 'Add' else (lambda x, y: x * y)
            tensors[name] = (c, h, w, [f16(op(x, y)) for x, y in zip(a, b)])
        elif t == 'Reduction' and p['Type'] == 'Avg':
            c, h, w, x = src[0]
            means = []
            for ch in range(c):
                total, exact = fp32_sum(x[ch * h * w:(ch + 1) * h * w])
                assert exact, 'an example sum is not exact in fp32'
                means.append(f16(total / (h * w)))
            tensors[name] = (c, 1, 1, means)
        else:
            raise ValueError(t)


def main():
    # 1x1 convolution, 8 -> 8 channels over 16 positions, fp16 weights.
    network('conv', {'image': inp(8, 16)}, {'conv': conv('image', 8)}, ['conv'],
            [('conv.weights', ramp(64, 0.125, -1.0, 1.0), 'Float16')],
            '1x1 Conv 8 -> 8 over 16 positions, Float16 weights')
    # Conv with Float32 weights and a GOC per-channel bias fused into it.
    network('conv_bias', {'image': inp(3, 8)},
            {'conv': conv('image', 2, 'Float32'),
             'bias': unit('conv', 'GOC', {'BiasScaleGroupData': {'BiasCount': 2, 'BiasIndex': 1, 'BiasOffset': 0,
                                                                  'BiasType': 'Float16'}})},
            ['bias'],
            [('kernel.weights', ramp(6, 0.5, -1.5, 1.5), 'Float32'), ('bias.weights', [1.0, -0.5], 'Float16')],
            '1x1 Conv 3 -> 2 with Float32 weights and a fused GOC bias')
    # 32 output channels: 16 kernel lanes of 2 channels each (OCGSize 1). The
    # weights are all equal, so the unknown channel order inside a lane cannot matter.
    network('wide_conv', {'image': inp(64, 4)}, {'conv': conv('image', 32)}, ['conv'],
            [('conv.weights', [0.03125] * (32 * 64), 'Float16')],
            '1x1 Conv 64 -> 32 (OCGSize 1), all weights 1/32')
    network('relu', {'image': inp(2, 40)}, {'relu': unit('image', 'Neuron', {'Type': 'ReLU'})}, ['relu'], [],
            'ReLU over 2 x 40 values')
    network('sigmoid', {'image': inp(1, 77)}, {'sigmoid': unit('image', 'Neuron', {'Type': 'Sigmoid'})},
            ['sigmoid'], [], 'Sigmoid over 77 values (lookup table in kernel lane 0)')
    network('concat', {'a': inp(3, 8), 'b': inp(5, 8)}, {'cat': unit(['a', 'b'], 'Concat', {'Dimension': 'Channel'})},
            ['cat'], [], 'Channel concat of 3 + 5 channels')
    network('reshape', {'image': inp(4, 8)},
            {'same': unit('image', 'Reshape', {'ReshapedBatch': 1, 'ReshapedChannel': 4, 'ReshapedDepth': 1,
                                               'ReshapedHeight': 1, 'ReshapedWidth': 8})},
            ['same'], [], 'Reshape that keeps the shape: one copy task')
    network('add', {'a': inp(16, 4), 'b': inp(16, 4)},
            {'sum': unit(['a', 'b'], 'ScaledElementWise', {'Type': 'Add', 'Scale': 15360})}, ['sum'], [],
            'ScaledElementWise Add on the planar engine')
    network('mul', {'a': inp(16, 4), 'b': inp(16, 4)},
            {'product': unit(['a', 'b'], 'ElementWise', {'Type': 'Mul'})}, ['product'], [],
            'ElementWise Mul on the planar engine')
    # Multi-layer: conv + bias -> relu -> add (second input) -> sigmoid, with
    # the relu result as a second output. Intermediates live in scratch memory.
    network('mlp', {'x': inp(16, 8), 'skip': inp(8, 8)},
            {'fc': conv('x', 8),
             'fc_bias': unit('fc', 'GOC', {'BiasScaleGroupData': {'BiasCount': 8, 'BiasIndex': 0,
                                                                  'BiasOffset': 256, 'BiasType': 'Float16'}}),
             'act': unit('fc_bias', 'Neuron', {'Type': 'ReLU'}),
             'res': unit(['act', 'skip'], 'ScaledElementWise', {'Type': 'Add', 'Scale': 15360}),
             'prob': unit('res', 'Neuron', {'Type': 'Sigmoid'})},
            ['prob', 'act'],
            [('mlp.weights', ramp(128, 0.0625, -0.5, 0.5) + ramp(8, 0.25, -1.0, 1.0), 'Float16')],
            'conv 16 -> 8 + bias -> relu -> add skip -> sigmoid; outputs prob and act')
    image_model()


def image_model():
    """A small image model: a 3x3 stride-2 stem (1 -> 256 channels, bias, ReLU),
    a 3x3 depthwise convolution (bias, ReLU), a 1x1 convolution 256 -> 64 (bias)
    and the mean over each 16 x 16 plane. The stem is the one dense 3x3 stride-2
    geometry whose kernel bytes are known (one input channel, 256 outputs, bias,
    no zero weight: docs/convolution.md). Values are small dyadic numbers so
    that every sum is exact in fp32 (checked) and the reference is bit exact."""
    stem_w = [(1 + (i * 5) % 4) * (1 if (i * 7) % 3 else -1) * 0.25 for i in range(256 * 9)]  # never 0
    stem_b = ramp(256, 0.5, -2.0, 2.0)
    dw_w = ramp(256 * 9, 0.25, -0.5, 0.5)
    dw_b = ramp(256, 0.25, -1.0, 1.0)
    pw_w = ramp(64 * 256, 0.03125, -0.125, 0.125)
    pw_b = ramp(64, 0.5, -2.0, 2.0)
    values = stem_w + stem_b + dw_w + dw_b + pw_w + pw_b
    off = [0]
    for part in (stem_w, stem_b, dw_w, dw_b, pw_w):
        off.append(off[-1] + 2 * len(part))
    bias = lambda bottom, count, at: unit(bottom, 'GOC', {'BiasScaleGroupData': {
        'BiasCount': count, 'BiasIndex': 0, 'BiasOffset': at, 'BiasType': 'Float16'}})
    network('image', {'image': inp(1, 32, 32)},
            {'stem': conv('image', 256, offset=off[0], k=3, step=2, pads=(0, 1, 0, 1)),
             'stem_bias': bias('stem', 256, off[1]),
             'stem_relu': unit('stem_bias', 'Neuron', {'Type': 'ReLU'}),
             'dw': conv('stem_relu', 256, offset=off[2], k=3, pads=(1, 1, 1, 1), groups=256),
             'dw_bias': bias('dw', 256, off[3]),
             'dw_relu': unit('dw_bias', 'Neuron', {'Type': 'ReLU'}),
             'pw': conv('dw_relu', 64, offset=off[4]),
             'pw_bias': bias('pw', 64, off[5]),
             'pool': unit('pw_bias', 'Reduction', {'Type': 'Avg', 'Dimension': ['Height', 'Width']})},
            ['pool'],
            [('image.weights', values, 'Float16')],
            'image model: 3x3/2 conv 1 -> 256 + ReLU, 3x3 depthwise + ReLU, 1x1 256 -> 64, mean over H x W',
            input_values={'image': ramp(32 * 32, 0.5, 0.0, 2.0)})


if __name__ == '__main__':
    main()
