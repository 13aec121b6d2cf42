"""The random problems of ``peer_torch.py --random``: the same generator as
``jitgemm-bench --random`` (``tools/random_draw.c``), so that one seed draws
the same problems in both; no torch needed.

For a seed S: a splitmix64 stream x_1, x_2, ... started at S,
u(x) = (x >> 11) * 2^-53 in [0, 1). Each problem takes, in this order:

- M = floor(pow(16385, u)), clamped to [1, 16384]: log-uniform;
- N, then K: with u < 0.85 dims[x % count] (dims sorted ascending, one draw
  x), else 1024 + 16 * (x % 1729): a multiple of 16 in 1024..28672;

and is drawn again (M, N and K) while M*K + N*K + M*N > 2^30 elements. One
more draw u then decides whether it is also timed through an M-generic plan
(u < the generic fraction), so the shapes of a seed do not depend on it.
"""
import json
import math
import os

M_MAX = 16384
DIM_MIN = 1024
DIM_MAX = 28672
DIM_STEP = 16
FROM_LIST = 0.85
MAX_ELEMENTS = 1 << 30
SEED_MAX = (1 << 63) - 1
COUNT_MAX = 100000
# Bands of M for the summary, as serving runs them: decode, ..., prefill.
M_BANDS = [(1, 16), (17, 128), (129, 512), (513, 2048), (2049, 8192), (8193, M_MAX)]

_MASK64 = (1 << 64) - 1


class SplitMix64:
    """Vigna's splitmix64: tests/common/jg_test.h's jg_splitmix64."""

    def __init__(self, seed):
        self.state = seed & _MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def uniform(self):
        """Uniform in [0, 1), from the top 53 bits of one draw."""
        return (self.next() >> 11) * 2.0 ** -53


def load_dims(path):
    """The distinct widths of a model-dims file in DIM_MIN..DIM_MAX, ascending.

    Raises ValueError with the C tool's message for a width that is not a
    positive integer, one in range that is not a multiple of 16, or none in
    range."""
    with open(path) as f:
        root = json.load(f)
    models = root.get("models") if isinstance(root, dict) else None
    if not isinstance(models, dict):
        raise ValueError(f'{path}: expected an object "models"')
    dims = set()
    for model, widths in models.items():
        if not isinstance(widths, dict):
            raise ValueError(f"{path}: models.{model}: expected an object of widths")
        for what, w in widths.items():
            if not isinstance(w, int) or isinstance(w, bool) or w < 1:
                raise ValueError(f"{path}: models.{model}.{what}: expected a positive integer")
            if DIM_MIN <= w <= DIM_MAX:
                if w % DIM_STEP:
                    raise ValueError(f"{path}: models.{model}.{what} = {w}: not a multiple "
                                     f"of {DIM_STEP}")
                dims.add(w)
    if not dims:
        raise ValueError(f"{path}: no width in {DIM_MIN}..{DIM_MAX}")
    return sorted(dims)


def bucket_hint(m):
    """M rounded up to a power of two: the hint a serving loop plans a bucket with."""
    return 1 << (m - 1).bit_length()


def bucket_hint_half(m):
    """M rounded up to a power of two or 1.5 times one (128, 192, 256, 384, ...), as
    jitgemm-bench --generic-buckets half: twice the buckets."""
    h = bucket_hint(m)
    return h // 4 * 3 if h >= 4 and h // 4 * 3 >= m else h


def buckets_text(half):
    """What the hints are, for reports (as jitgemm-bench prints it)."""
    return "a power of two or 1.5 times one" if half else "a power of two"


def _draw_dim(rng, dims):
    from_list = rng.uniform() < FROM_LIST
    x = rng.next()
    steps = (DIM_MAX - DIM_MIN) // DIM_STEP + 1
    return dims[x % len(dims)] if from_list else DIM_MIN + DIM_STEP * (x % steps)


def draw(seed, dims, count, generic_fraction, half=False):
    """count problems from seed: dicts with m, n, k and generic_hint (0: not
    timed M-generic; half: bucket_hint_half's, on the same rows)."""
    rng = SplitMix64(seed)
    out = []
    for _ in range(count):
        while True:
            # math.pow: the same libm pow as the C tool's, so the same M
            m = min(max(int(math.floor(math.pow(M_MAX + 1.0, rng.uniform()))), 1), M_MAX)
            n = _draw_dim(rng, dims)
            k = _draw_dim(rng, dims)
            if m * k + n * k + m * n <= MAX_ELEMENTS:
                break
        generic = rng.uniform() < generic_fraction
        hint = 0 if not generic else bucket_hint_half(m) if half else bucket_hint(m)
        out.append({"m": m, "n": n, "k": k, "generic_hint": hint})
    return out


def parse_seed(text):
    """A seed as jitgemm-bench takes it: decimal digits, at most SEED_MAX; else None."""
    if not text or not text.isascii() or not text.isdigit() or int(text) > SEED_MAX:
        return None
    return int(text)


def fresh_seed():
    """32 bits from the OS, short enough to type again."""
    return int.from_bytes(os.urandom(4), "little")


def emit_shapes(path, count, seed, generic_fraction, problems, half=False):
    """The problems as spec lines, byte for byte as jitgemm-bench --emit-shapes."""
    with open(path, "w") as f:
        f.write(f"# --random {count} --seed {seed} --random-generic {generic_fraction:g}"
                f" --generic-buckets {'half' if half else 'pow2'}\n")
        for i, p in enumerate(problems, 1):
            hint = p["generic_hint"] or "null"
            f.write(f'{{"name": "r{i}", "kind": "dense", "m": {p["m"]}, "n": {p["n"]}, '
                    f'"k": {p["k"]}, "generic_hint_m": {hint}}}\n')


def quantile_sorted(v, q):
    """The q-quantile of ascending values, linear between the closest ranks."""
    at = (len(v) - 1) * q
    lo = math.floor(at)
    if lo >= len(v) - 1:
        return v[-1]
    return v[lo] + (at - lo) * (v[lo + 1] - v[lo])


def ratio_stats(ratios):
    """{"count", "geomean", "p10", "min"} of ratios (None for the numbers of none)."""
    if not ratios:
        return {"count": 0, "geomean": None, "p10": None, "min": None}
    v = sorted(ratios)
    return {"count": len(v), "geomean": math.exp(sum(math.log(r) for r in v) / len(v)),
            "p10": quantile_sorted(v, 0.1), "min": v[0]}
