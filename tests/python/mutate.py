"""Feeds seeded random mutations of one program file to libane.parse (used by test_errors.py).

usage: mutate.py FILE COUNT SEED
Each mutation must give a Program (which must then also dump) or raise libane.Error. The number
of each mutation is printed before it is tried, so a crash names the mutation that caused it.
Exit status 0 when all passed, 1 when anything raised another exception (each is listed).
"""
import random
import struct
import sys

import libane

WORDS = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x4000, 0xFFFF)


def mutate(data, rng):
    b = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0:  # flip a few bits
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # an extreme 32-bit word, in the header area more often
        at = rng.randrange(0, min(len(b), 4096) if rng.random() < 0.7 else len(b)) & ~3
        b[at:at + 4] = struct.pack("<I", rng.choice(WORDS))
    elif kind == 2:  # truncate
        del b[rng.randrange(len(b)):]
    elif kind == 3:  # random bytes over a stretch
        at = rng.randrange(len(b))
        b[at:at + 64] = bytes(rng.randrange(256) for _ in range(min(64, len(b) - at)))
    else:  # insert or delete a stretch
        at = rng.randrange(len(b))
        if rng.random() < 0.5:
            b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
        else:
            del b[at:at + rng.randint(1, 32)]
    return bytes(b)


def main(path, count, seed):
    data = open(path, "rb").read()
    rng = random.Random(seed)
    parsed = refused = 0
    failures = []
    for i in range(count):
        m = mutate(data, rng)
        print(f"mutation {i}", flush=True)
        try:
            p = libane.parse(m, path="mutated")
        except libane.Error:
            refused += 1
            continue
        except Exception as e:  # anything but libane.Error is a bug
            failures.append(f"mutation {i}: parse: {type(e).__name__}: {e}")
            continue
        parsed += 1
        # A program that was accepted must also be describable.
        for what, call in (("to_dict", p.to_dict), ("dump", p.dump), ("dump(raw=True)", lambda: p.dump(raw=True)),
                           ("to_bytes", p.to_bytes), ("buffers", lambda: [b.name for b in p.buffers]),
                           ("tasks", lambda: [(t.summary, t.fields()) for t in p.tasks])):
            try:
                call()
            except libane.Error:
                pass
            except Exception as e:
                failures.append(f"mutation {i}: {what}: {type(e).__name__}: {e}")
    print("\n".join(failures))
    print(f"{count} mutations: {parsed} parsed, {refused} refused, {len(failures)} other exceptions")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
