"""A small Transformer encoder classifies token sequences: embedding, learned positions,
two TransformerEncoderLayers (batch_first, a key padding mask), mean pooling, a linear
head; AdamW with a warm-up schedule; prints the loss per epoch and the test accuracy."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(2)
VOCAB, LENGTH, D = 12, 10, 16


def make_data(n):
    """Token 0 pads; the label: whether token 5 appears more often than token 7."""
    x = rng.integers(1, VOCAB, (n, LENGTH))
    lengths = rng.integers(4, LENGTH + 1, n)
    for row, length in zip(x, lengths, strict=True):
        row[length:] = 0
    y = ((x == 5).sum(1) > (x == 7).sum(1)).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(LENGTH, D))
        layer = nn.TransformerEncoderLayer(
            D, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(D, 2)

    def forward(self, tokens):
        pad = tokens == 0
        h = self.encoder(self.embed(tokens) + self.pos, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1))


model = Encoder()
with torch.no_grad():  # weights from NumPy: both libraries start from the same point
    for name, p in model.named_parameters():
        scale = 0.02 if "norm" not in name else 0.0
        values = rng.standard_normal(tuple(p.shape)).astype(np.float32) * scale
        p.copy_(torch.from_numpy(values) + (1.0 if "norm" in name and "weight" in name else 0.0))

train_x, train_y = make_data(128)
test_x, test_y = make_data(64)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 8))

for epoch in range(4):
    model.train()
    total = 0.0
    for start in range(0, 128, 32):
        opt.zero_grad()
        loss = F.cross_entropy(model(train_x[start : start + 32]), train_y[start : start + 32])
        loss.backward()
        opt.step()
        sched.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / 4:.5f} lr {sched.get_last_lr()[0]:.6f}")

model.eval()
with torch.no_grad():
    logits = model(test_x)
print("test logits", [round(v, 4) for v in logits[:3].flatten().tolist()])
print(f"test accuracy {(logits.argmax(1) == test_y).float().mean().item():.4f}")
