#!/usr/bin/python3
"""Writes tests/data/llama_reference.json: the logits of two tiny Llama-architecture decoders computed by an
independent forward written here with numpy alone (float64), for tests/workloads/test_llama.cpp to compare
models::Llama against. Needs only numpy (no torch, no transformers):

    python3 scripts/make-llama-reference.py [OUT_FILE]

The forward is the architecture as its papers and Hugging Face's LlamaForCausalLM describe it, written
out: token embedding; per block, pre-norm x + attention(rms(x)), then x + mlp(rms(x)); a final rms and the
LM head (the embedding itself when tied). rms(x) = w * x / sqrt(mean(x^2) + eps). Attention: q = x Wq^T
(+ b), k, v likewise with kv_heads heads of head_dim; rotary embeddings (Su et al. 2021) on q and k with
the dimensions of each head paired as (i, i + head_dim/2) (Hugging Face's rotate_half order), angle
position * inv_freq[i], inv_freq[i] = theta^(-2i/head_dim) changed by Llama 3.1's scaling where the
config asks; query head h reads key/value head floor(h / (heads / kv_heads)); softmax(q k^T / sqrt(d))
with the strict upper triangle masked; the heads concatenated and o_proj. MLP: down(silu(gate x) * up x).

Two configurations, each stored as a Hugging Face config.json object that the C++ test reads with
trainbench's own config reader:
  A  model_type llama: grouped-query attention (4 query heads on 2 key/value heads), tied embeddings,
     Llama 3.1 rope scaling with its three frequency bands all present, no biases
  B  model_type qwen2: multi-query attention (1 key/value head), head_dim 10 with 3 heads on a width of
     24 (head_dim is not hidden / heads), untied LM head, q/k/v biases

Weights come from a formula that the C++ test evaluates the same way, parameter by parameter in the
order of each configuration's "parameters" list (Hugging Face's state-dict names and shapes):

    w[k] = base + scale * sin(a k + b k^2 + c p),   rounded to float32

k is the element's flat row-major index, p the parameter's position in the list, (a, b, c) the file's
"phase". Hugging Face's Linear weights are (out, in), as torch's: nothing is transposed.

The script prints how far the logits move under mistakes the test must see (RoPE's dimensions paired
(2i, 2i+1) instead, the key/value heads repeated in the other order, no rope scaling, no RoPE at all,
LayerNorm's centring) and how far numpy's float32 forward is from the float64 one: the test's tolerance
sits between the two.
"""
import json
import math
import os
import sys

import numpy as np

PHASE = (0.29, 0.017, 0.73)
TOKENS = {"A": [[3, 18, 0, 7, 7, 12, 5, 1, 16, 9, 2, 11], [9, 2, 2, 10, 4, 0, 12, 6, 17, 3, 3, 8]],
          "B": [[1, 22, 5, 5, 13, 0, 19, 8, 2, 7], [14, 3, 21, 9, 9, 0, 6, 11, 17, 4]]}
CONFIGS = {
    "A": {"model_type": "llama", "vocab_size": 19, "hidden_size": 32, "intermediate_size": 40,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
          "rope_theta": 10000.0, "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "attention_bias": False,
          "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 8.0,
                           "original_max_position_embeddings": 64},
          "max_position_embeddings": 512, "hidden_act": "silu"},
    "B": {"model_type": "qwen2", "vocab_size": 23, "hidden_size": 24, "intermediate_size": 36,
          "num_hidden_layers": 2, "num_attention_heads": 3, "num_key_value_heads": 1, "head_dim": 10,
          "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
          "max_position_embeddings": 64, "use_sliding_window": False, "hidden_act": "silu"},
}
# base, scale by kind: logits of order 1 and attention far from uniform.
KINDS = {"embed": (0.0, 0.5), "norm": (1.0, 0.2), "q": (0.0, 0.35), "k": (0.0, 0.35), "v": (0.0, 0.4),
         "o": (0.0, 0.35), "gate": (0.0, 0.4), "up": (0.0, 0.4), "down": (0.0, 0.3), "bias": (0.0, 0.1),
         "head": (0.0, 0.3)}


def parameter_list(c):
    """(name, shape, kind) in Hugging Face's state-dict order."""
    h, d, i = c["hidden_size"], c["head_dim"], c["intermediate_size"]
    qh, kvh = c["num_attention_heads"], c["num_key_value_heads"]
    bias = c["model_type"] == "qwen2" or c.get("attention_bias", False)
    out = [("model.embed_tokens.weight", (c["vocab_size"], h), "embed")]
    for n in range(c["num_hidden_layers"]):
        b = f"model.layers.{n}."
        for proj, rows in (("q", qh * d), ("k", kvh * d), ("v", kvh * d)):
            out.append((b + f"self_attn.{proj}_proj.weight", (rows, h), proj))
            if bias:
                out.append((b + f"self_attn.{proj}_proj.bias", (rows,), "bias"))
        out += [(b + "self_attn.o_proj.weight", (h, qh * d), "o"),
                (b + "mlp.gate_proj.weight", (i, h), "gate"),
                (b + "mlp.up_proj.weight", (i, h), "up"),
                (b + "mlp.down_proj.weight", (h, i), "down"),
                (b + "input_layernorm.weight", (h,), "norm"),
                (b + "post_attention_layernorm.weight", (h,), "norm")]
    out.append(("model.norm.weight", (h,), "norm"))
    if not c["tie_word_embeddings"]:
        out.append(("lm_head.weight", (c["vocab_size"], h), "head"))
    return out


def make_weights(c):
    a, b, ph = PHASE
    weights = {}
    for p, (name, shape, kind) in enumerate(parameter_list(c)):
        base, scale = KINDS[kind]
        k = np.arange(int(np.prod(shape)), dtype=np.float64)
        w = base + scale * np.sin(a * k + b * k * k + ph * p)
        weights[name] = w.astype(np.float32).astype(np.float64).reshape(shape)  # what a float32 model holds
    return weights


def inverse_frequencies(c, scaled=True):
    d = c["head_dim"]
    f = 1.0 / c["rope_theta"] ** (np.arange(0, d, 2, dtype=np.float64) / d)
    s = c.get("rope_scaling")
    if not scaled or not s:
        return f
    # Llama 3.1: wavelengths above original / low_freq_factor slowed by the factor, below original /
    # high_freq_factor kept, in between a blend linear in original / wavelength.
    orig, low, high, factor = (s["original_max_position_embeddings"], s["low_freq_factor"], s["high_freq_factor"],
                               s["factor"])
    out = []
    for x in f:
        wavelen = 2 * math.pi / x
        if wavelen > orig / low:
            out.append(x / factor)
        elif wavelen < orig / high:
            out.append(x)
        else:
            smooth = (orig / wavelen - low) / (high - low)
            out.append((1 - smooth) * x / factor + smooth * x)
    return np.array(out)


def rotate(x, positions, inv_freq, pairing):
    """x [T, d] of one head rotated by position * inv_freq, pairs (i, i + d/2) or (2i, 2i + 1)."""
    angles = positions[:, None] * inv_freq[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    half = x.shape[1] // 2
    out = np.empty_like(x)
    if pairing == "halves":
        first, second = x[:, :half], x[:, half:]
        out[:, :half] = first * cos - second * sin
        out[:, half:] = second * cos + first * sin
    else:
        even, odd = x[:, 0::2], x[:, 1::2]
        out[:, 0::2] = even * cos - odd * sin
        out[:, 1::2] = odd * cos + even * sin
    return out


def forward(ids, c, weights, pairing="halves", kv_order="grouped", scaled=True, rope=True, centred=False,
            dtype=np.float64):
    w = {name: value.astype(dtype) for name, value in weights.items()}
    eps, d = c["rms_norm_eps"], c["head_dim"]
    qh, kvh = c["num_attention_heads"], c["num_key_value_heads"]
    groups = qh // kvh
    bias = c["model_type"] == "qwen2" or c.get("attention_bias", False)
    t = len(ids)
    positions = np.arange(t, dtype=np.float64)
    inv_freq = inverse_frequencies(c, scaled)

    def rms(x, weight):
        if centred:
            x = x - x.mean(-1, keepdims=True)
        return weight * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))

    def proj(x, name):
        y = x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if bias and name[-6:] in ("q_proj", "k_proj", "v_proj") else y

    x = w["model.embed_tokens.weight"][ids]
    for n in range(c["num_hidden_layers"]):
        b = f"model.layers.{n}."
        y = rms(x, w[b + "input_layernorm.weight"])
        q, k, v = proj(y, b + "self_attn.q_proj"), proj(y, b + "self_attn.k_proj"), proj(y, b + "self_attn.v_proj")
        heads = []
        for h in range(qh):
            g = h // groups if kv_order == "grouped" else h % kvh
            qi, ki, vi = q[:, h * d:(h + 1) * d], k[:, g * d:(g + 1) * d], v[:, g * d:(g + 1) * d]
            if rope:
                qi, ki = rotate(qi, positions, inv_freq, pairing), rotate(ki, positions, inv_freq, pairing)
            scores = qi @ ki.T / math.sqrt(d)
            scores = np.where(np.tril(np.ones((t, t))) > 0, scores, -np.inf)
            e = np.exp(scores - scores.max(-1, keepdims=True))
            heads.append((e / e.sum(-1, keepdims=True)) @ vi)
        x = x + np.concatenate(heads, -1) @ w[b + "self_attn.o_proj.weight"].T
        y = rms(x, w[b + "post_attention_layernorm.weight"])
        gate, up = y @ w[b + "mlp.gate_proj.weight"].T, y @ w[b + "mlp.up_proj.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ w[b + "mlp.down_proj.weight"].T
    x = rms(x, w["model.norm.weight"])
    head = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    return x @ head.T


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                                                              "llama_reference.json")
    fixture = {
        "about": "Tiny Llama-architecture logits from scripts/make-llama-reference.py (numpy float64); weights "
                 "w[k] = base + scale * sin(a k + b k^2 + c p) rounded to float32, k the flat index in the Hugging "
                 "Face shape, p the position in `parameters`",
        "phase": list(PHASE),
        "models": [],
    }
    for name, c in CONFIGS.items():
        weights = make_weights(c)
        logits = np.stack([forward(np.array(t), c, weights) for t in TOKENS[name]])

        def worst(**variant):
            other = np.stack([forward(np.array(t), c, weights, **variant) for t in TOKENS[name]])
            return float(np.abs(other - logits).max())

        differences = {"rope_pairs_interleaved": worst(pairing="interleaved"), "no_rope": worst(rope=False),
                       "layer_norm_centring": worst(centred=True), "float32_forward": worst(dtype=np.float32)}
        if c["num_key_value_heads"] > 1 and c["num_key_value_heads"] < c["num_attention_heads"]:
            differences["kv_heads_repeated_in_the_other_order"] = worst(kv_order="interleaved")
        if c.get("rope_scaling"):
            differences["no_rope_scaling"] = worst(scaled=False)
        print(f"model {name}: logits between {logits.min():.3f} and {logits.max():.3f}")
        for what, value in differences.items():
            print(f"  max |logit difference| {what}: {value:.3g}")
        fixture["models"].append({
            "name": name,
            "config": c,
            "parameters": [{"name": n, "shape": list(s), "base": KINDS[k][0], "scale": KINDS[k][1]}
                           for n, s, k in parameter_list(c)],
            "tokens": TOKENS[name],
            "logits": [[[float(f"{v:.12g}") for v in row] for row in seq] for seq in logits],
            "max_abs_difference_of": {what: float(f"{value:.3g}") for what, value in differences.items()},
        })
    with open(out, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    print(out, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main()
