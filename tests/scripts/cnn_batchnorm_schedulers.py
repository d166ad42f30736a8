"""A small CNN with BatchNorm, trained with SGD, momentum, weight decay and two chained
LR schedulers on a synthetic image task; prints the loss per epoch, the learning rate, the
running statistics and the test accuracy."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import ExponentialLR, MultiStepLR
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)


def make_data(n):
    x = rng.standard_normal((n, 1, 12, 12)).astype(np.float32)
    y = (x[:, 0, 3:9, 3:9].mean(axis=(1, 2)) > 0).astype(np.int64)  # a bright centre
    x[:, 0, 4:8, 4:8] += np.where(y == 1, 0.5, -0.5)[:, None, None].astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 2 * 2, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(torch.flatten(x, 1))


def init_(model):
    """Weights from NumPy, so both libraries start from the same point."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            values = rng.standard_normal(tuple(p.shape)).astype(np.float32)
            p.copy_(torch.from_numpy(values * (0.3 if "weight" in name else 0.1)))


x_train, y_train = make_data(256)
x_test, y_test = make_data(128)
loader = DataLoader(TensorDataset(x_train, y_train), batch_size=32, shuffle=False)

model = Net()
init_(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
sched = [MultiStepLR(opt, milestones=[3, 5], gamma=0.5), ExponentialLR(opt, gamma=0.95)]

for epoch in range(6):
    model.train()
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * len(xb)
    for s in sched:
        s.step()
    print(f"epoch {epoch} loss {total / len(x_train):.5f} lr {opt.param_groups[0]['lr']:.6f}")

print("running_mean", [round(v, 4) for v in model.bn1.running_mean.tolist()])
print("running_var", [round(v, 4) for v in model.bn2.running_var[:4].tolist()])
model.eval()
with torch.no_grad():
    acc = (model(x_test).argmax(1) == y_test).float().mean().item()
print(f"test accuracy {acc:.4f}")
