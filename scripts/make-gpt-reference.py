#!/usr/bin/python3
"""Writes tests/data/gpt2_reference.json: the logits of a tiny GPT-2 computed by an independent forward
written here with numpy alone (float64), for tests/workloads/test_gpt.cpp to compare models::Gpt against. Needs only
numpy (no torch, no transformers):

    python3 scripts/make-gpt-reference.py [OUT_FILE]

The forward is Hugging Face's GPT2LMHeadModel (modeling_gpt2.py) written out: token + learned position
embeddings; per block, pre-LN: x + attn(ln_1(x)), then x + mlp(ln_2(x)); attention is one fused Conv1D
c_attn (y = x W + b, W of shape (in, out)) split into q, k, v, each split into heads of hidden / heads
dims, softmax(q k^T / sqrt(d)) with the strict upper triangle masked (causal), the heads concatenated
and c_proj; the MLP is c_fc (H -> 4H), GELU's tanh approximation ("gelu_new"), c_proj (4H -> H); a final
ln_f and logits = h wte^T (the head tied to the token embedding). LayerNorm with eps 1e-5, biased
variance.

Weights come from a formula that the C++ test evaluates the same way, parameter by parameter in the
order of the file's "parameters" list (Hugging Face's GPT2Model state-dict names and shapes):

    w[k] = base + scale * sin(a k + b k^2 + c p),   rounded to float32

k is the element's flat row-major index in the Hugging Face shape, p the parameter's position in the
list, (a, b, c) the file's "phase". The k^2 term keeps the matrices full rank (a phase linear in k
would make every matrix rank 2). models::Gpt stores Conv1D weights as torch Linear weights, (out, in):
the C++ test copies the transpose of each (in, out) matrix.

The script prints how far the logits move under changes the test must be able to see (erf GELU instead
of tanh, post-LN blocks instead of pre-LN, no causal mask), and how far numpy's float32 forward is from
the float64 one (the size of fp32 rounding): the test's tolerance sits between the two.
"""
import json
import math
import os
import sys

import numpy as np

VOCAB, MAX_POS, HIDDEN, LAYERS, HEADS, EPS = 13, 8, 16, 2, 2, 1e-5
PHASE = (0.37, 0.013, 0.91)
# base, scale by kind: logits of order 1, attention scores far from uniform, and MLP pre-activations of
# order 1-2 (where tanh- and erf-GELU differ most: up to 4.7e-4 near |x| = 2.7).
KINDS = {
    "wte": (0.0, 0.5),
    "wpe": (0.0, 0.3),
    "ln_weight": (1.0, 0.2),
    "ln_bias": (0.0, 0.1),
    "c_attn": (0.0, 0.4),
    "c_proj": (0.0, 0.5),
    "c_fc": (0.0, 0.8),
    "bias": (0.0, 0.1),
}
# Two sequences of MAX_POS tokens: the batch dimension and every position embedding are used.
TOKENS = [[3, 11, 0, 7, 7, 12, 5, 1], [9, 2, 2, 10, 4, 0, 12, 6]]


def parameter_list():
    """(name, shape, kind) in Hugging Face's GPT2Model state-dict order."""
    h = HIDDEN
    out = [("wte.weight", (VOCAB, h), "wte"), ("wpe.weight", (MAX_POS, h), "wpe")]
    for i in range(LAYERS):
        b = f"h.{i}."
        out += [
            (b + "ln_1.weight", (h,), "ln_weight"),
            (b + "ln_1.bias", (h,), "ln_bias"),
            (b + "attn.c_attn.weight", (h, 3 * h), "c_attn"),
            (b + "attn.c_attn.bias", (3 * h,), "bias"),
            (b + "attn.c_proj.weight", (h, h), "c_proj"),
            (b + "attn.c_proj.bias", (h,), "bias"),
            (b + "ln_2.weight", (h,), "ln_weight"),
            (b + "ln_2.bias", (h,), "ln_bias"),
            (b + "mlp.c_fc.weight", (h, 4 * h), "c_fc"),
            (b + "mlp.c_fc.bias", (4 * h,), "bias"),
            (b + "mlp.c_proj.weight", (4 * h, h), "c_proj"),
            (b + "mlp.c_proj.bias", (h,), "bias"),
        ]
    out += [("ln_f.weight", (h,), "ln_weight"), ("ln_f.bias", (h,), "ln_bias")]
    return out


def make_weights():
    a, b, c = PHASE
    weights = {}
    for p, (name, shape, kind) in enumerate(parameter_list()):
        base, scale = KINDS[kind]
        k = np.arange(int(np.prod(shape)), dtype=np.float64)
        w = base + scale * np.sin(a * k + b * k * k + c * p)
        weights[name] = w.astype(np.float32).astype(np.float64).reshape(shape)  # what a float32 model holds
    return weights


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


_erf = np.vectorize(math.erf)


def gelu_erf(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention(x, w, block, causal):
    t, d = x.shape[0], HIDDEN // HEADS
    qkv = x @ w[block + "attn.c_attn.weight"] + w[block + "attn.c_attn.bias"]
    q, k, v = qkv[:, :HIDDEN], qkv[:, HIDDEN : 2 * HIDDEN], qkv[:, 2 * HIDDEN :]
    heads = []
    for h in range(HEADS):
        cols = slice(h * d, (h + 1) * d)
        scores = q[:, cols] @ k[:, cols].T / math.sqrt(d)
        if causal:
            scores = np.where(np.tril(np.ones((t, t))) > 0, scores, -np.inf)
        heads.append(softmax(scores) @ v[:, cols])
    return np.concatenate(heads, -1) @ w[block + "attn.c_proj.weight"] + w[block + "attn.c_proj.bias"]


def mlp(x, w, block, gelu):
    inner = gelu(x @ w[block + "mlp.c_fc.weight"] + w[block + "mlp.c_fc.bias"])
    return inner @ w[block + "mlp.c_proj.weight"] + w[block + "mlp.c_proj.bias"]


def forward(ids, weights, gelu=gelu_tanh, post_ln=False, causal=True, dtype=np.float64):
    """Logits [T, VOCAB] of one sequence."""
    w = {name: value.astype(dtype) for name, value in weights.items()}
    x = w["wte.weight"][ids] + w["wpe.weight"][np.arange(len(ids))]
    for i in range(LAYERS):
        b = f"h.{i}."
        ln_1 = lambda y: layer_norm(y, w[b + "ln_1.weight"], w[b + "ln_1.bias"])  # noqa: E731
        ln_2 = lambda y: layer_norm(y, w[b + "ln_2.weight"], w[b + "ln_2.bias"])  # noqa: E731
        if post_ln:  # the original Transformer's (and BERT's) order: normalize after the residual sum
            x = ln_1(x + attention(x, w, b, causal))
            x = ln_2(x + mlp(x, w, b, gelu))
        else:
            x = x + attention(ln_1(x), w, b, causal)
            x = x + mlp(ln_2(x), w, b, gelu)
    return layer_norm(x, w["ln_f.weight"], w["ln_f.bias"]) @ w["wte.weight"].T


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                                                              "gpt2_reference.json")
    weights = make_weights()
    logits = np.stack([forward(np.array(t), weights) for t in TOKENS])

    def worst(**variant):
        other = np.stack([forward(np.array(t), weights, **variant) for t in TOKENS])
        return float(np.abs(other - logits).max())

    differences = {
        "gelu_erf": worst(gelu=gelu_erf),
        "post_ln": worst(post_ln=True),
        "no_causal_mask": worst(causal=False),
        "float32_forward": worst(dtype=np.float32),
    }
    for name, value in differences.items():
        print(f"max |logit difference| {name}: {value:.3g}")
    print(f"logits between {logits.min():.3f} and {logits.max():.3f}")

    fixture = {
        "about": "Tiny GPT-2 logits from scripts/make-gpt-reference.py (numpy float64, Hugging Face's "
                 "GPT2LMHeadModel forward); weights w[k] = base + scale * sin(a k + b k^2 + c p) rounded to "
                 "float32, k the flat index in the Hugging Face shape, p the position in `parameters`",
        "config": {"vocab": VOCAB, "max_pos": MAX_POS, "hidden": HIDDEN, "layers": LAYERS, "heads": HEADS,
                   "layer_norm_eps": EPS},
        "phase": list(PHASE),
        "parameters": [{"name": name, "shape": list(shape), "base": KINDS[kind][0], "scale": KINDS[kind][1]}
                       for name, shape, kind in parameter_list()],
        "tokens": TOKENS,
        "logits": [[[float(f"{v:.12g}") for v in row] for row in seq] for seq in logits],
        "max_abs_difference_of": {name: float(f"{value:.3g}") for name, value in differences.items()},
    }
    with open(out, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    print(out, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main()
