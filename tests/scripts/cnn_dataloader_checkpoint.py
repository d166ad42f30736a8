"""A CNN trained from a Dataset through DataLoaders (shuffled with a seeded generator, with
0 and 2 worker processes), checkpointed mid-training with torch.save (model, optimizer,
scheduler, epoch) to a file and to a buffer, resumed with torch.load into fresh objects;
prints the losses, what the two loaders gave, and that the resumed run matches."""

import io
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, random_split

rng = np.random.default_rng(5)


class Shapes(Dataset):
    """8x8 images: a vertical bar (class 0), a horizontal bar (1) or a square (2)."""

    def __init__(self, n):
        self.x = rng.standard_normal((n, 1, 8, 8)).astype(np.float32) * 0.3
        self.y = rng.integers(0, 3, n)
        for img, label in zip(self.x, self.y, strict=True):
            if label == 0:
                img[0, :, 3:5] += 1.0
            elif label == 1:
                img[0, 3:5, :] += 1.0
            else:
                img[0, 2:6, 2:6] += 1.0

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i]), int(self.y[i])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 6, 3, padding=1)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=2)
        self.drop = nn.Dropout(0.0)
        self.fc = nn.Linear(8 * 3 * 3, 3)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = F.avg_pool2d(F.relu(self.conv2(x)), 1)
        return self.fc(self.drop(x.flatten(1)))


def init_(model):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, tuple(p.shape)).astype(np.float32)))


def train_epoch(model, opt, loader):
    model.train()
    total, n = 0.0, 0
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item() * len(y)
        n += len(y)
    return total / n


def accuracy(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


data = Shapes(120)
train, test = random_split(data, [90, 30], generator=torch.Generator().manual_seed(0))
print("split", len(train), len(test), sorted(test.indices)[:5])

# what the loaders give: the same batches with 0 and 2 workers
for workers in (0, 2):
    loader = DataLoader(
        train,
        batch_size=16,
        shuffle=True,
        num_workers=workers,
        generator=torch.Generator().manual_seed(1),
    )
    batches = list(loader)
    x0, y0 = batches[0]
    print(
        f"workers={workers} batches {len(batches)} first {tuple(x0.shape)} {str(x0.dtype)[-7:]}",
        y0.tolist(),
        f"{x0.sum().item():.4f}",
        len(batches[-1][1]),
    )

model = Net()
init_(model)
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
train_loader = DataLoader(
    train, batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(2)
)
test_loader = DataLoader(test, batch_size=10, num_workers=2)
for epoch in range(2):
    loss = train_epoch(model, opt, train_loader)
    sched.step()
    print(f"epoch {epoch} loss {loss:.5f} test acc {accuracy(model, test_loader):.4f}")

# checkpoint: to a file and to a buffer
ckpt = {
    "epoch": 2,
    "model": model.state_dict(),
    "opt": opt.state_dict(),
    "sched": sched.state_dict(),
    "note": "after two epochs",
    "lengths": torch.tensor([len(train), len(test)]),
}
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save(ckpt, path)
buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
print("saved", sorted(ckpt), os.path.getsize(path) > 1000)

# continue the original for two epochs, with the loader's generator state saved first
gen_state = train_loader.generator.get_state()
cont = []
for _epoch in range(2, 4):
    cont.append(train_epoch(model, opt, train_loader))
    sched.step()

# resume into fresh objects
loaded = torch.load(path)
model2 = Net()
model2.load_state_dict(loaded["model"])
opt2 = torch.optim.Adam(model2.parameters(), lr=0.5)
opt2.load_state_dict(loaded["opt"])
sched2 = torch.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
sched2.load_state_dict(loaded["sched"])
print("resumed", loaded["epoch"], loaded["note"], loaded["lengths"].tolist(), sched2.get_last_lr())
print("opt state", sorted(opt2.state_dict()["state"][0]), opt2.param_groups[0]["lr"])
loader2 = DataLoader(train, batch_size=16, shuffle=True, generator=torch.Generator())
loader2.generator.set_state(gen_state)
resumed = []
for _epoch in range(2, 4):
    resumed.append(train_epoch(model2, opt2, loader2))
    sched2.step()
print("continued", [f"{v:.5f}" for v in cont], "resumed", [f"{v:.5f}" for v in resumed])
same = all(
    torch.equal(a, b)
    for a, b in zip(model.state_dict().values(), model2.state_dict().values(), strict=True)
)
print("same weights", same)

model3 = Net()
missing = model3.load_state_dict(torch.load(buf, weights_only=True), strict=True)
print("from buffer", missing, f"{sum(p.sum().item() for p in model3.parameters()):.5f}")
partial = {k: v for k, v in loaded["model"].items() if k.startswith("conv")}
res = Net().load_state_dict(partial, strict=False)
print("partial missing", res.missing_keys, "unexpected", res.unexpected_keys)
print(f"final acc {accuracy(model2, test_loader):.4f}")
