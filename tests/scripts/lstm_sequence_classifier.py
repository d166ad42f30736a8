"""An LSTM sequence classifier: variable-length sequences padded and packed, a 2-layer
bidirectional LSTM, the last hidden states into a linear head, Adam with gradient
clipping; prints the loss per epoch and the test accuracy."""

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

rng = np.random.default_rng(1)


def make_data(n):
    """Sequences of 3-feature steps; the label says whether the first feature's sum is > 0."""
    seqs, labels = [], []
    for _ in range(n):
        length = int(rng.integers(3, 9))
        x = rng.standard_normal((length, 3)).astype(np.float32)
        seqs.append(torch.from_numpy(x))
        labels.append(int(x[:, 0].sum() > 0))
    return seqs, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 8, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * 8, 2)

    def forward(self, padded, lengths):
        packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        last = torch.cat([h[-2], h[-1]], dim=1)  # the top layer, both directions
        return self.head(last)


model = Classifier()
with torch.no_grad():  # weights from NumPy: both libraries start from the same point
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, tuple(p.shape)).astype(np.float32)))

train_x, train_y = make_data(96)
test_x, test_y = make_data(48)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(5):
    total = 0.0
    for start in range(0, len(train_x), 16):
        seqs = train_x[start : start + 16]
        lengths = torch.tensor([len(s) for s in seqs])
        padded = pad_sequence(seqs, batch_first=True)
        opt.zero_grad()
        loss = loss_fn(model(padded, lengths), train_y[start : start + 16])
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / 6:.5f} last grad norm {norm.item():.4f}")

with torch.no_grad():
    lengths = torch.tensor([len(s) for s in test_x])
    logits = model(pad_sequence(test_x, batch_first=True), lengths)
    acc = (logits.argmax(1) == test_y).float().mean().item()
print(f"test accuracy {acc:.4f}")
