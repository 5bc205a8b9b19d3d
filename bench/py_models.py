"""Plain-PyTorch equivalents of trainbench's non-CNN workloads, for bench/vs_pytorch.py.

Same structure and parameter count as the C++ models (src/models/bert.*, src/models/bilstm.*), and the
same synthetic batch and loss as their workloads (src/workloads/bert.cpp, src/workloads/bilstm.cpp):

- bert_pretraining(): Hugging Face's BertForPreTraining written out in torch.nn (no
  nn.TransformerEncoder): embeddings with segment types, post-LN encoder layers with separate
  Q/K/V linears and erf-GELU, LayerNorm eps 1e-12, pooler, masked-LM head (dense + GELU + LayerNorm,
  decoder tied to the word embedding with its own bias) and next-sentence head Linear(H, 2). Loss =
  MLM cross-entropy over round(15%) of each sequence's positions (the rest labelled -100) + NSP.
- bilstm(): embedding -> stacked bidirectional LSTM (batch-first) -> mean over time -> linear.

Each builder asserts the parameter count it derives from the shapes. Run this file to check both.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

IGNORE_INDEX = -100  # Hugging Face's label for positions the MLM loss skips
MASKED_SHARE = 0.15


# ---- BERT -----------------------------------------------------------------------------------------

class BertEmbeddings(nn.Module):
    def __init__(self, vocab, hidden, max_pos, type_vocab=2, eps=1e-12, dropout=0.1):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions).unsqueeze(0) + \
            self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    """Q, K, V and output linears with bias; softmax(q k^T / sqrt(d)) v with dropout on the probabilities."""

    def __init__(self, hidden, heads, dropout=0.1, attention="math"):
        super().__init__()
        assert hidden % heads == 0, f"heads {heads} must divide hidden {hidden}"
        assert attention in ("math", "sdpa"), attention
        self.heads = heads
        self.attention = attention
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        n, t, h = x.shape
        d = h // self.heads

        def split(y):
            return y.view(n, t, self.heads, d).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        return self.output(attend(q, k, v, self.dropout, self.attention, causal=False).transpose(1, 2).reshape(n, t, h))


def attend(q, k, v, dropout, attention, causal):
    """trainbench's models/attention.cpp: sdpa (scaled_dot_product_attention) or math (explicit)."""
    if attention == "sdpa":
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout.p if dropout.training else 0.0,
                                              is_causal=causal)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if causal:
        t = q.size(-2)
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.matmul(dropout(torch.softmax(scores, -1)), v)


class BertLayer(nn.Module):
    """Post-LN: attention, dropout, residual + LayerNorm; dense -> GELU -> dense, dropout, residual + LayerNorm."""

    def __init__(self, hidden, heads, ffn, eps=1e-12, dropout=0.1, attention="math"):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads, dropout, attention)
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.intermediate = nn.Linear(hidden, ffn)
        self.output = nn.Linear(ffn, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        a = self.attention_norm(x + self.dropout(self.attention(x)))
        f = self.output(F.gelu(self.intermediate(a)))  # erf GELU, as Hugging Face's "gelu"
        return self.output_norm(a + self.dropout(f))


class BertForPreTraining(nn.Module):
    def __init__(self, layers, hidden, heads, vocab, max_pos, eps=1e-12, dropout=0.1, attention="math"):
        super().__init__()
        self.vocab = vocab
        self.embeddings = BertEmbeddings(vocab, hidden, max_pos, eps=eps, dropout=dropout)
        self.encoder = nn.ModuleList([BertLayer(hidden, heads, 4 * hidden, eps, dropout, attention)
                                      for _ in range(layers)])
        self.pooler = nn.Linear(hidden, hidden)
        # Masked-LM head (BertLMPredictionHead): transform, then a decoder tied to the word embedding.
        self.transform = nn.Linear(hidden, hidden)
        self.transform_norm = nn.LayerNorm(hidden, eps=eps)
        self.decoder_bias = nn.Parameter(torch.zeros(vocab))
        self.seq_relationship = nn.Linear(hidden, 2)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, input_ids, token_type_ids):
        x = self.embeddings(input_ids, token_type_ids)
        for layer in self.encoder:
            x = layer(x)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        h = self.transform_norm(F.gelu(self.transform(x)))
        mlm = F.linear(h, self.embeddings.word_embeddings.weight, self.decoder_bias)  # every position
        return mlm, self.seq_relationship(pooled)

    def synthetic_batch(self, batch, seq, device="cpu"):
        """Random ids; segments 0 then 1 (halves); round(15%) labelled positions per sequence; NSP labels."""
        ids = torch.randint(0, self.vocab, (batch, seq), device=device)
        segments = torch.zeros(batch, seq, dtype=torch.long, device=device)
        segments[:, seq // 2:] = 1
        masked = max(1, round(MASKED_SHARE * seq))
        positions = torch.rand(batch, seq, device=device).argsort(1)[:, :masked]
        labels = torch.full((batch, seq), IGNORE_INDEX, dtype=torch.long, device=device)
        labels.scatter_(1, positions, torch.randint(0, self.vocab, (batch, masked), device=device))
        next_sentence = torch.randint(0, 2, (batch,), device=device)
        return ids, segments, labels.reshape(-1), next_sentence

    def loss(self, ids, segments, labels, next_sentence):
        mlm, nsp = self(ids, segments)
        return F.cross_entropy(mlm.reshape(-1, mlm.size(-1)), labels, ignore_index=IGNORE_INDEX) + \
            F.cross_entropy(nsp, next_sentence)


def bert_parameter_count(layers, hidden, vocab, max_pos):
    """BertForPreTraining's count from its shapes (tied decoder weight counted once)."""
    h, f = hidden, 4 * hidden
    embeddings = (vocab + max_pos + 2) * h + 2 * h
    layer = 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h
    pooler = h * h + h
    mlm_head = (h * h + h) + 2 * h + vocab
    nsp_head = 2 * h + 2
    return embeddings + layers * layer + pooler + mlm_head + nsp_head


def unique_parameter_count(model):
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def bert_pretraining(layers=12, hidden=768, heads=12, vocab=30522, max_pos=512, seq=200, attention="math"):
    """BertForPreTraining as trainbench's `bert` (head=pretraining) builds it. `model.seq` is the
    sequence length its synthetic batches use: model.loss(*model.synthetic_batch(batch, model.seq))."""
    if seq > max_pos:
        raise ValueError(f"seq {seq} exceeds max_pos {max_pos}")
    model = BertForPreTraining(layers, hidden, heads, vocab, max_pos, attention=attention)
    model.seq = seq
    expected = bert_parameter_count(layers, hidden, vocab, max_pos)
    got = unique_parameter_count(model)
    assert got == expected, f"BertForPreTraining has {got} parameters, its shapes give {expected}"
    return model


# ---- GPT-2 ----------------------------------------------------------------------------------------

class GptBlock(nn.Module):
    """Pre-LN: x + attn(ln_1(x)), then x + mlp(ln_2(x)); c_attn H -> 3H, MLP 4H with tanh-GELU."""

    def __init__(self, hidden, heads, dropout, attention):
        super().__init__()
        self.heads, self.attention = heads, attention
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.attn_proj = nn.Linear(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.mlp_proj = nn.Linear(4 * hidden, hidden)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        n, t, h = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q, k, v = (y.view(n, t, self.heads, h // self.heads).transpose(1, 2) for y in (q, k, v))
        a = attend(q, k, v, self.dropout, self.attention, causal=True).transpose(1, 2).reshape(n, t, h)
        x = x + self.dropout(self.attn_proj(a))
        return x + self.dropout(self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")))


class Gpt(nn.Module):
    """GPT-2 as trainbench's `gpt` builds it: learned positions, pre-LN blocks, final LayerNorm, LM head
    tied to the token embedding; next-token cross-entropy on random tokens."""

    def __init__(self, layers, hidden, heads, vocab, max_pos, dropout=0.0, attention="math"):
        super().__init__()
        self.vocab = vocab
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.blocks = nn.ModuleList([GptBlock(hidden, heads, dropout, attention) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)
        self.dropout = nn.Dropout(dropout)
        self.apply(BertForPreTraining._init)  # N(0, 0.02) weights, zero biases, as GPT-2's

    def forward(self, ids):
        x = self.dropout(self.wte(ids) + self.wpe(torch.arange(ids.size(1), device=ids.device)))
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)

    def synthetic_batch(self, batch, seq, device="cpu"):
        tokens = torch.randint(0, self.vocab, (batch, seq + 1), device=device)
        return tokens[:, :-1].contiguous(), tokens[:, 1:].reshape(-1)

    def loss(self, ids, targets):
        return F.cross_entropy(self(ids).reshape(-1, self.vocab), targets)


def gpt(layers=12, hidden=768, heads=0, vocab=50257, max_pos=1024, seq=1024, attention="math"):
    """trainbench's `gpt` with its --set values (heads 0: hidden / 64); checks GPT-2's parameter count
    from the shapes: wte V·H + wpe P·H + L (12 H² + 13 H) + final LayerNorm 2H."""
    heads = heads or hidden // 64
    model = Gpt(layers, hidden, heads, vocab, max_pos, attention=attention)
    model.seq = seq
    expected = vocab * hidden + max_pos * hidden + layers * (12 * hidden * hidden + 13 * hidden) + 2 * hidden
    got = unique_parameter_count(model)
    assert got == expected, f"Gpt has {got} parameters, its shapes give {expected}"
    return model


# ---- Llama ---------------------------------------------------------------------------------------

# The shapes of trainbench's named llama sizes used here (src/cases/llama_config.cpp; each from its
# model's config.json): vocab, hidden, intermediate, layers, heads, kv_heads, head_dim, rope_theta,
# rms eps, tied, q/k/v bias. Llama 3.1 rope scaling applies to llama-tiny (as to the Llama 3 sizes).
LLAMA_SIZES = {
    "smollm2-135m": (49152, 576, 1536, 30, 9, 3, 64, 100000.0, 1e-5, True, False),
    "qwen2.5-0.5b": (151936, 896, 4864, 24, 14, 2, 64, 1e6, 1e-6, True, True),
    "llama-3.2-1b": (128256, 2048, 8192, 16, 32, 8, 64, 500000.0, 1e-5, True, False),
    "llama-tiny": (512, 64, 160, 2, 4, 2, 16, 500000.0, 1e-5, True, False),
}
LLAMA3_SCALED = {"llama-3.2-1b", "llama-tiny"}


def rope_inverse_frequencies(theta, head_dim, llama3_factor=None):
    """theta^(-2i/d), with Llama 3.1's scaling (low 1, high 4, original context 8192) when a factor is given."""
    out = []
    for i in range(head_dim // 2):
        f = theta ** (-2 * i / head_dim)
        if llama3_factor:
            wavelen = 2 * math.pi / f
            if wavelen > 8192:
                f /= llama3_factor
            elif wavelen >= 2048:
                s = (8192 / wavelen - 1) / 3
                f = (1 - s) * f / llama3_factor + s * f
        out.append(f)
    return torch.tensor(out, dtype=torch.float32)


class RmsNorm(nn.Module):
    def __init__(self, width, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        return self.weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


def rotate(x, cos, sin):
    half = x.size(-1) // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin


class LlamaBlock(nn.Module):
    """Pre-norm: x + attention(rms(x)) with RoPE and grouped-query heads, then x + down(silu(gate) * up)."""

    def __init__(self, hidden, inter, heads, kv_heads, head_dim, eps, bias, attention):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.attention = heads, kv_heads, head_dim, attention
        self.q_proj = nn.Linear(hidden, heads * head_dim, bias=bias)
        self.k_proj = nn.Linear(hidden, kv_heads * head_dim, bias=bias)
        self.v_proj = nn.Linear(hidden, kv_heads * head_dim, bias=bias)
        self.o_proj = nn.Linear(heads * head_dim, hidden, bias=False)
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.up_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)
        self.input_layernorm = RmsNorm(hidden, eps)
        self.post_attention_layernorm = RmsNorm(hidden, eps)
        self.dropout = nn.Dropout(0.0)

    def forward(self, x, cos, sin):
        n, t, _ = x.shape
        y = self.input_layernorm(x)
        q = rotate(self.q_proj(y).view(n, t, self.heads, self.head_dim).transpose(1, 2), cos, sin)
        k = rotate(self.k_proj(y).view(n, t, self.kv_heads, self.head_dim).transpose(1, 2), cos, sin)
        v = self.v_proj(y).view(n, t, self.kv_heads, self.head_dim).transpose(1, 2)
        groups = self.heads // self.kv_heads
        if groups > 1:  # query head h reads key/value head h // groups
            k = k[:, :, None].expand(n, self.kv_heads, groups, t, self.head_dim).reshape(n, self.heads, t, -1)
            v = v[:, :, None].expand(n, self.kv_heads, groups, t, self.head_dim).reshape(n, self.heads, t, -1)
        a = attend(q, k, v, self.dropout, self.attention, causal=True).transpose(1, 2).reshape(n, t, -1)
        x = x + self.o_proj(a)
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


class Llama(nn.Module):
    """A Llama-architecture decoder as trainbench's `llama` builds it; next-token cross-entropy on random tokens."""

    def __init__(self, size, layers=0, vocab=0, attention="math"):
        super().__init__()
        v, h, i, l, heads, kv, d, theta, eps, tied, bias = LLAMA_SIZES[size]
        self.vocab, self.layers = vocab or v, layers or l
        self.embed_tokens = nn.Embedding(self.vocab, h)
        self.blocks = nn.ModuleList([LlamaBlock(h, i, heads, kv, d, eps, bias, attention) for _ in range(self.layers)])
        self.norm = RmsNorm(h, eps)
        self.lm_head = None if tied else nn.Linear(h, self.vocab, bias=False)
        self.apply(BertForPreTraining._init)  # N(0, 0.02) weights, zero biases
        self.inv_freq = rope_inverse_frequencies(theta, d, 32.0 if size in LLAMA3_SCALED else None)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        freqs = torch.arange(ids.size(1), dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        angles = torch.cat((freqs, freqs), -1)
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        for block in self.blocks:
            x = block(x, cos, sin)
        x = self.norm(x)
        return F.linear(x, self.embed_tokens.weight) if self.lm_head is None else self.lm_head(x)

    synthetic_batch = Gpt.synthetic_batch
    loss = Gpt.loss


def llama(size="llama-3.2-1b", layers=0, vocab=0, seq=2048, attention="math"):
    """trainbench's `llama` with its --set values; checks the parameter count from the shapes: V·H + L (H·q·d
    + 2 H·k·d + q·d·H + 3 H·I + 2H [+ q·d + 2 k·d biases]) + H [+ V·H untied]."""
    model = Llama(size, layers, vocab, attention)
    model.seq = seq
    v, h, i, l, q, k, d, _, _, tied, bias = LLAMA_SIZES[size]
    v, l = vocab or v, layers or l
    block = h * q * d + 2 * h * k * d + q * d * h + 3 * h * i + 2 * h + ((q * d + 2 * k * d) if bias else 0)
    expected = v * h + l * block + h + (0 if tied else v * h)
    got = unique_parameter_count(model)
    assert got == expected, f"Llama has {got} parameters, its shapes give {expected}"
    return model


# ---- biLSTM ---------------------------------------------------------------------------------------

class BiLSTM(nn.Module):
    def __init__(self, vocab, embed, hidden, layers, classes):
        super().__init__()
        self.vocab, self.classes = vocab, classes
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, bidirectional=True, batch_first=True)
        self.classifier = nn.Linear(2 * hidden, classes)

    def forward(self, tokens):
        out, _ = self.lstm(self.embedding(tokens))  # [N, T, 2*hidden]
        return self.classifier(out.mean(1))

    def synthetic_batch(self, batch, seq, device="cpu"):
        return (torch.randint(0, self.vocab, (batch, seq), device=device),
                torch.randint(0, self.classes, (batch,), device=device))

    def loss(self, tokens, labels):
        return F.cross_entropy(self(tokens), labels)


def bilstm_parameter_count(vocab, embed, hidden, layers, classes):
    """Per layer and direction: W_ih 4h x input, W_hh 4h x h, b_ih and b_hh 4h each (input = embed for
    layer 0, 2h above it); plus the embedding and the classifier."""
    lstm = sum(2 * (4 * hidden * ((embed if l == 0 else 2 * hidden) + hidden) + 8 * hidden) for l in range(layers))
    return vocab * embed + lstm + 2 * hidden * classes + classes


def bilstm(vocab=20000, embed=256, hidden=256, layers=2, classes=2, seq=100):
    """trainbench's `bilstm` workload model: model.loss(*model.synthetic_batch(batch, model.seq))."""
    model = BiLSTM(vocab, embed, hidden, layers, classes)
    model.seq = seq
    expected = bilstm_parameter_count(vocab, embed, hidden, layers, classes)
    got = unique_parameter_count(model)
    assert got == expected, f"biLSTM has {got} parameters, its shapes give {expected}"
    return model


if __name__ == "__main__":
    base = bert_pretraining()
    assert unique_parameter_count(base) == 110_106_428  # Hugging Face's BertForPreTraining, Base
    print("bert_pretraining (Base):", unique_parameter_count(base))
    print("bilstm (defaults):", unique_parameter_count(bilstm()))
    tiny = bert_pretraining(layers=2, hidden=64, heads=2, vocab=100, max_pos=32, seq=16)
    opt = torch.optim.AdamW(tiny.parameters(), lr=1e-3)
    batch = tiny.synthetic_batch(4, tiny.seq)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = tiny.loss(*batch)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print("tiny bert losses:", [round(x, 3) for x in losses])
    small = bilstm(vocab=100, embed=16, hidden=16, seq=12)
    print("tiny bilstm loss:", small.loss(*small.synthetic_batch(8, small.seq)).item())
    smol = llama("smollm2-135m")
    assert unique_parameter_count(smol) == 134_515_008  # HuggingFaceTB/SmolLM2-135M
    print("llama smollm2-135m:", unique_parameter_count(smol))
