"""A character-level language model: text encoded to indices, an Embedding, a 2-layer GRU
(and an LSTM variant through LSTMCell steps), trained with truncated backprop through time
(hidden state detached between chunks), gradient clipping and Adam; then sampled greedily
and with a seeded multinomial at a temperature. Prints losses and the generated text."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

text = (
    "the quick brown fox jumps over the lazy dog. "
    "a stitch in time saves nine. "
    "all that glitters is not gold. "
) * 2
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print("vocab", len(chars), "length", len(data))

rng = np.random.default_rng(11)


def init_(model):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.2, 0.2, tuple(p.shape)).astype(np.float32)))


class CharGRU(nn.Module):
    def __init__(self, vocab, emb=12, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, num_layers=2, batch_first=True, dropout=0.0)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y), h


class CharLSTMCell(nn.Module):
    def __init__(self, vocab, emb=12, hidden=24):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.cell = nn.LSTMCell(emb, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        e = self.emb(x)
        outs = []
        for t in range(e.shape[1]):
            state = self.cell(e[:, t], state)
            outs.append(state[0])
        return self.out(torch.stack(outs, 1)), state


def batches(seq_len, batch):
    """Consecutive chunks of `batch` parallel streams, for truncated BPTT."""
    n = (len(data) - 1) // batch
    streams = data[: n * batch + 1]
    xs = streams[:-1].view(batch, n)
    ys = streams[1:].view(batch, n)
    for start in range(0, n - seq_len + 1, seq_len):
        yield xs[:, start : start + seq_len], ys[:, start : start + seq_len]


def train(model, epochs, lr):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        h, total, count = None, 0.0, 0
        for x, y in batches(16, 4):
            if h is not None:
                h = h.detach() if isinstance(h, torch.Tensor) else tuple(s.detach() for s in h)
            logits, h = model(x, h)
            loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item()
            count += 1
        print(f"{type(model).__name__} epoch {epoch} loss {total / count:.4f}")


@torch.no_grad()
def generate(model, prompt, n, temperature=None, generator=None):
    model.eval()
    x = torch.tensor([[stoi[c] for c in prompt]])
    logits, h = model(x)
    out = list(prompt)
    for _ in range(n):
        last = logits[0, -1]
        if temperature is None:
            nxt = int(last.argmax())
        else:
            probs = F.softmax(last / temperature, dim=-1)
            nxt = int(torch.multinomial(probs, 1, generator=generator))
        out.append(chars[nxt])
        logits, h = model(torch.tensor([[nxt]]), h)
    model.train()
    return "".join(out)


gru = CharGRU(len(chars))
init_(gru)
train(gru, 3, 0.03)
print("greedy:", repr(generate(gru, "the ", 30)))
g = torch.Generator().manual_seed(0)
sampled = generate(gru, "the ", 30, temperature=0.8, generator=g)  # (the draws differ)
print("sampled", len(sampled), set(sampled) <= set(chars), sampled.startswith("the "))
probs = F.softmax(gru(torch.tensor([[stoi["t"]]]))[0][0, -1] / 0.8, dim=-1)
print(
    "next-char top3",
    [f"{v:.4f}" for v in probs.topk(3).values.tolist()],
    probs.topk(3).indices.tolist(),
)
print("gru weights", [tuple(p.shape) for n, p in gru.rnn.named_parameters()][:4])

lstm = CharLSTMCell(len(chars))
init_(lstm)
train(lstm, 2, 0.03)
print("greedy lstm:", repr(generate(lstm, "a st", 20)))
h0 = torch.zeros(1, 24)
hs = [h0]
cell = nn.GRUCell(5, 24)
init_(cell)
xin = torch.from_numpy(rng.standard_normal((3, 1, 5)).astype(np.float32))
for t in range(3):
    hs.append(cell(xin[t], hs[-1]))
print("grucell", f"{hs[-1].sum().item():.5f}", f"{hs[-1].abs().max().item():.5f}")
full = nn.GRU(5, 24)
with torch.no_grad():
    full.weight_ih_l0.copy_(cell.weight_ih)
    full.weight_hh_l0.copy_(cell.weight_hh)
    full.bias_ih_l0.copy_(cell.bias_ih)
    full.bias_hh_l0.copy_(cell.bias_hh)
y, hn = full(xin, h0.unsqueeze(0))
print("gru matches cell", torch.allclose(hn[0], hs[-1], atol=1e-6), tuple(y.shape))
